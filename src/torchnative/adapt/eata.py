"""EATA and ETA (Niu et al., ICML 2022): entropy minimisation on reliable, non-redundant samples.

Per batch: keep samples whose entropy is below ``e_margin`` (0.4·ln C); of those, drop samples
whose softmax is cosine-similar (|cos| ≥ ``d_margin`` 0.05) to an EMA (0.9) of earlier mean
probabilities; weight each kept entropy by exp(−(H − e_margin)); EATA adds the Fisher
regulariser α·Σ F·(θ − θ₀)² (α 2000) with F estimated on source-like data and θ₀ the delta's base.
Reference optimizer: SGD lr 0.00025, momentum 0.9. Predictions are those before the update.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .method import (Method, configure_norm_affine, make_optimizer, norm_affine_covers,
                     softmax_entropy)
from . import check


class ETA(Method):
    name = "eta"
    needs_backward = True
    updates = "norm affine (weight, bias)"
    fisher_alpha = 0.0

    def __init__(self, lr: float = 0.00025, optim: str = "sgd", momentum: float = 0.9,
                 e_margin: float | None = None, d_margin: float = 0.05, sign: float = 1.0):
        name = type(self).__name__
        self.lr, self.optim = check.real(name, "lr", lr), check.optimizer(name, optim)
        self.momentum = check.real(name, "momentum", momentum)
        self.e_margin = check.real(name, "e_margin", e_margin, optional=True)
        self.d_margin, self.sign = check.real(name, "d_margin", d_margin), check.sign(name, sign)

    def covers(self, model):
        return norm_affine_covers(type(self).__name__, model)

    def configure(self, model):
        configure_norm_affine(model)

    def margin(self, n_classes: int) -> float:
        return 0.4 * math.log(n_classes) if self.e_margin is None else self.e_margin

    def step(self, model, x, delta):
        opt = self.optimizer(model, delta, make_optimizer(self.optim, self.lr, self.momentum))
        self.prepare(model, delta)
        out = model(x)
        e0 = self.margin(out.shape[1])
        ent = softmax_entropy(out)
        keep1 = torch.where(ent < e0)[0]
        ent = ent[keep1]
        probs = out[keep1].softmax(1)
        ema = delta.state.get("probs_ema")
        if ema is not None:
            cos = F.cosine_similarity(ema.unsqueeze(0), probs, dim=1)
            keep2 = torch.where(torch.abs(cos) < self.d_margin)[0]
            ent, probs = ent[keep2], probs[keep2]
        delta.state["probs_ema"] = _update_probs(ema, probs)
        delta.state["reliable"] = delta.state.get("reliable", 0) + int(keep1.numel())
        delta.state["updated"] = delta.state.get("updated", 0) + int(ent.numel())
        coeff = 1 / torch.exp(ent.clone().detach() - e0)
        loss = self.sign * ent.mul(coeff).mean(0)
        loss = loss + self.regulariser(model, delta)
        if ent.numel() != 0:
            loss.backward()
            opt.step()
        opt.zero_grad()
        return out

    def prepare(self, model, delta):
        pass

    def regulariser(self, model, delta):
        return 0.0


class EATA(ETA):
    name = "eata"

    def __init__(self, fisher_data=None, fisher_alpha: float = 2000.0, **kw):
        super().__init__(**kw)
        self.fisher_data = fisher_data
        self.fisher_alpha = check.real("EATA", "fisher_alpha", fisher_alpha)

    def prepare(self, model, delta):
        if self.fisher_data is None or "fisher" in delta.state:
            return
        delta.state["fisher"] = fisher(model, delta, self.fisher_data)

    def regulariser(self, model, delta):
        fish = delta.state.get("fisher")
        if not fish:
            return 0.0
        return sum(self.fisher_alpha * (f * (delta._get(n) - delta.base[n]) ** 2).sum()
                   for n, f in fish.items())


def _update_probs(ema, probs):
    with torch.no_grad():
        if probs.shape[0] == 0:
            return ema
        if ema is None:
            return probs.mean(0)
        return 0.9 * ema + (1 - 0.9) * probs.mean(0)


def fisher(model, delta, batches) -> dict:
    """Diagonal Fisher of the covered parameters: squared gradients of the cross-entropy against
    the model's own predictions, averaged over batches (EATA's estimate)."""
    params = {n: delta._get(n) for n in delta.names if delta._get(n).requires_grad}
    acc = {n: torch.zeros_like(p) for n, p in params.items()}
    count = 0
    for x in batches:
        out = model(x)
        F.cross_entropy(out, out.argmax(1)).backward()
        for n, p in params.items():
            if p.grad is not None:
                acc[n] += p.grad.detach() ** 2
                p.grad = None
        count += 1
    if count == 0:
        raise ValueError("EATA's fisher_data yielded no batches")
    return {n: a / count for n, a in acc.items()}
