"""TTT (Sun et al., ICML 2020): test-time training on a self-supervised rotation task.

The model was trained jointly with a rotation head on its shared features (digits_models.
DigitsTTT). At test time the shared feature extractor is updated by SGD (lr 0.001, momentum 0.9,
the reference) on predicting the rotation (0/90/180/270°) of the test images, then the main head
predicts. ``online=True`` keeps the updates across batches (TTT-Online); ``online=False`` is the
standard version: every sample starts from the base and takes ``steps`` updates (reference 10).

Any normalization works. The paper's networks use GroupNorm, whose statistics are each sample's
own, so a single test image is normalized as in training; the GroupNorm twin is
``digits_models.source_model("gn", ttt=True)`` (``torchnative adapt --arch gn --methods ttt``).
With BatchNorm the model stays in eval mode on source statistics (one image has none of its own).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..delta import MissingLayer
from .method import Method, make_optimizer
from . import check


def _rotations(x):
    views = torch.cat([torch.rot90(x, k, (2, 3)) for k in range(4)])
    return views, torch.arange(4).repeat_interleave(x.shape[0])


class TTT(Method):
    name = "ttt"
    needs_backward = True
    updates = "shared feature extractor (model.features)"

    def __init__(self, lr: float = 0.001, momentum: float = 0.9, online: bool = True,
                 steps: int | None = None, sign: float = 1.0):
        if not isinstance(online, bool):
            raise TypeError(f"TTT: online must be a bool, got {type(online).__name__}")
        self.lr, self.momentum = check.real("TTT", "lr", lr), check.real("TTT", "momentum", momentum)
        self.online, self.sign = online, check.sign("TTT", sign)
        self.steps = check.integer("TTT", "steps", steps) if steps is not None else \
            (1 if online else 10)

    def covers(self, model):
        if not all(hasattr(model, a) for a in ("features", "head", "rot_head", "embed")):
            raise MissingLayer("TTT needs a rotation head trained jointly: a model with features, "
                               "embed(), head and rot_head (see digits_models.DigitsTTT)")
        return [f"features.{n}" for n, _ in model.features.named_parameters()]

    def configure(self, model):
        model.eval()  # BatchNorm on source statistics: a single test sample has none of its own
        model.requires_grad_(False)
        model.features.requires_grad_(True)

    def _adapt(self, model, x, delta):
        opt = self.optimizer(model, delta, make_optimizer("sgd", self.lr, self.momentum))
        for _ in range(self.steps):
            views, labels = _rotations(x)
            loss = self.sign * F.cross_entropy(model.rot_head(model.embed(views)), labels)
            loss.backward()
            opt.step()
            opt.zero_grad()

    def step(self, model, x, delta):
        if self.online:
            self._adapt(model, x, delta)
            with torch.no_grad():
                return model(x)
        outs = []
        for i in range(x.shape[0]):
            self._adapt(model, x[i:i + 1], delta)
            with torch.no_grad():
                outs.append(model(x[i:i + 1]))
            delta.revert()
        return torch.cat(outs)
