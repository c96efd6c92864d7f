"""LAME (Boudiaf et al., CVPR 2022): Laplacian-adjusted maximum likelihood on the outputs only.

No weight changes and no backward pass: the source model's probabilities are corrected by a
Laplacian term over the batch's k-nearest-neighbour affinity (k 5, L2-normalised features),
iterating Y ← softmax(log p + λ·W·Y) (λ 1) until the energy changes by ≤ 1e-8 relatively (at most
100 steps). The model must expose ``embed(x)`` (features) and ``head`` (the classifier), or the
caller passes ``features``/``classifier``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .method import Method
from . import check


class LAME(Method):
    name = "lame"
    needs_backward = False
    updates = "nothing (corrects outputs over the batch)"

    def __init__(self, knn: int = 5, bound_lambda: float = 1.0, max_steps: int = 100,
                 features=None, classifier=None):
        self.knn = check.integer("LAME", "knn", knn)
        self.bound_lambda = check.real("LAME", "bound_lambda", bound_lambda)
        self.max_steps = check.integer("LAME", "max_steps", max_steps)
        self.features, self.classifier = features, classifier

    def covers(self, model):
        if self.features is None and not (hasattr(model, "embed") and hasattr(model, "head")):
            from ..delta import MissingLayer
            raise MissingLayer("LAME needs a feature extractor: a model with embed() and head, "
                               "or LAME(features=..., classifier=...)")
        return []

    def configure(self, model):
        model.eval()

    def step(self, model, x, delta):
        with torch.no_grad():
            feats = (self.features or model.embed)(x)
            logits = (self.classifier or model.head)(feats)
            unary = -torch.log(logits.softmax(1) + 1e-10)
            kernel = self.affinity(F.normalize(feats, p=2, dim=-1))
            kernel = 0.5 * (kernel + kernel.t())
            return self.laplacian(unary, kernel).log()  # log-probabilities, argmax = prediction

    def affinity(self, f):
        n = f.shape[0]
        dist = torch.norm(f.unsqueeze(0) - f.unsqueeze(1), dim=-1, p=2)
        k = min(self.knn + 1, n)
        idx = dist.topk(k, -1, largest=False).indices[:, 1:]
        return torch.zeros(n, n, dtype=f.dtype).scatter_(-1, idx, 1.0)

    def laplacian(self, unary, kernel):
        y = (-unary).softmax(-1)
        old = float("inf")
        for i in range(self.max_steps):
            pairwise = self.bound_lambda * kernel.matmul(y)
            y = (-unary + pairwise).softmax(-1)
            e = float((unary * y - self.bound_lambda * pairwise * y
                       + y * torch.log(y.clip(1e-20))).sum())
            if i > 1 and abs(e - old) <= 1e-8 * abs(old):
                break
            old = e
        return y

    def predict(self, model, x):
        return self.step(model, x, None)
