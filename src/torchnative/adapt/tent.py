"""Tent (Wang et al., ICLR 2021): minimise the prediction's entropy over norm affine parameters.

Reference defaults: Adam, lr 1e-3, betas (0.9, 0.999), one step per batch, BatchNorm on batch
statistics; the prediction returned is the one made before the update.
"""

from __future__ import annotations

from .method import (Method, configure_norm_affine, make_optimizer, norm_affine_covers,
                     softmax_entropy)
from . import check


class Tent(Method):
    name = "tent"
    needs_backward = True
    updates = "norm affine (weight, bias)"

    def __init__(self, lr: float = 1e-3, optim: str = "adam", momentum: float = 0.9,
                 steps: int = 1, sign: float = 1.0):
        self.lr, self.optim = check.real("Tent", "lr", lr), check.optimizer("Tent", optim)
        self.momentum = check.real("Tent", "momentum", momentum)
        self.steps = check.integer("Tent", "steps", steps)
        self.sign = check.sign("Tent", sign)  # -1 maximises entropy: must make the error rise

    def covers(self, model):
        return norm_affine_covers("Tent", model)

    def configure(self, model):
        configure_norm_affine(model)

    def step(self, model, x, delta):
        opt = self.optimizer(model, delta, make_optimizer(self.optim, self.lr, self.momentum))
        for _ in range(self.steps):
            out = model(x)
            loss = self.sign * softmax_entropy(out).mean(0)
            loss.backward()
            opt.step()
            opt.zero_grad()
        return out
