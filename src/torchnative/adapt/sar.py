"""SAR (Niu et al., ICLR 2023): sharpness-aware, reliable entropy minimisation with a reset rule.

Per batch: keep samples with entropy below 0.4·ln C; SAM step (ρ 0.05) on their mean entropy: climb
to θ + ρ·g/‖g‖, recompute the entropies there, keep those still below the margin, and step the
base optimizer (SGD lr 0.00025, momentum 0.9) from θ with that gradient. An EMA (0.9) of the
second loss below 0.2 means the model collapsed: the delta is reverted (weights, optimizer and
EMA together). Predictions are those of the first forward.
"""

from __future__ import annotations

import math

import torch

from .method import (Method, configure_norm_affine, make_optimizer, norm_affine_covers,
                     softmax_entropy)
from . import check


class SAR(Method):
    name = "sar"
    needs_backward = True
    updates = "norm affine (weight, bias)"

    def __init__(self, lr: float = 0.00025, momentum: float = 0.9, rho: float = 0.05,
                 e_margin: float | None = None, reset_constant: float = 0.2, sign: float = 1.0):
        self.lr, self.rho = check.real("SAR", "lr", lr), check.real("SAR", "rho", rho)
        self.momentum = check.real("SAR", "momentum", momentum)
        self.e_margin = check.real("SAR", "e_margin", e_margin, optional=True)
        self.reset_constant = check.real("SAR", "reset_constant", reset_constant)
        self.sign = check.sign("SAR", sign)

    def covers(self, model):
        return norm_affine_covers("SAR", model)

    def configure(self, model):
        configure_norm_affine(model)

    def step(self, model, x, delta):
        opt = self.optimizer(model, delta, make_optimizer("sgd", self.lr, self.momentum))
        params = [p for g in opt.param_groups for p in g["params"]]
        opt.zero_grad()
        out = model(x)
        e0 = 0.4 * math.log(out.shape[1]) if self.e_margin is None else self.e_margin
        ent = softmax_entropy(out)
        keep1 = torch.where(ent < e0)[0]
        (self.sign * ent[keep1].mean(0)).backward()
        # SAM's first step: move to the sharpest nearby point
        with torch.no_grad():
            grads = [p.grad for p in params if p.grad is not None]
            norm = torch.norm(torch.stack([g.norm(p=2) for g in grads]), p=2) if grads else None
            old = {}
            for p in params:
                if p.grad is None:
                    continue
                old[p] = p.detach().clone()
                p.add_(p.grad * (self.rho / (norm + 1e-12)).to(p))
        opt.zero_grad()
        ent2 = softmax_entropy(model(x))[keep1]
        keep2 = torch.where(ent2 < e0)[0]
        loss2 = ent2[keep2].mean(0)
        value = float(loss2.item())
        if not math.isnan(value):
            ema = delta.state.get("loss_ema")
            delta.state["loss_ema"] = value if ema is None else 0.9 * ema + (1 - 0.9) * value
        (self.sign * loss2).backward()
        # SAM's second step: back to θ, then the base optimizer's step with the sharp gradient
        with torch.no_grad():
            for p, v in old.items():
                p.copy_(v)
        opt.step()
        opt.zero_grad()
        ema = delta.state.get("loss_ema")
        if ema is not None and ema < self.reset_constant:
            delta.revert()
            delta.state["resets"] = 1  # counted across reverts by the wrapper
        return out
