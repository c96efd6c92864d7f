"""MEMO (Zhang et al., NeurIPS 2022): marginal entropy over augmentations of ONE test point.

For each sample: ``n_aug`` augmented views, one SGD step (lr 0.005, reference for CIFAR; no
momentum) on the entropy of the views' averaged prediction over all parameters, predict the
original, then revert: every sample starts from the base (an episodic, per-request delta).
BatchNorm keeps the source statistics (eval mode).
"""

from __future__ import annotations

import math

import torch

from .augment import augment
from .method import Method, make_optimizer
from . import check


class MEMO(Method):
    name = "memo"
    needs_backward = True
    updates = "all parameters, reverted after every sample"

    def __init__(self, lr: float = 0.005, n_aug: int = 16, steps: int = 1, sign: float = 1.0):
        self.lr, self.n_aug = check.real("MEMO", "lr", lr), check.integer("MEMO", "n_aug", n_aug)
        self.steps, self.sign = check.integer("MEMO", "steps", steps), check.sign("MEMO", sign)

    def covers(self, model):
        return [n for n, _ in model.named_parameters()]

    def configure(self, model):
        model.eval()
        model.requires_grad_(True)

    def step(self, model, x, delta):
        outs = []
        for i in range(x.shape[0]):
            one = x[i:i + 1]
            opt = self.optimizer(model, delta, make_optimizer("sgd", self.lr, momentum=0.0))
            for _ in range(self.steps):
                views = torch.cat([augment(one) for _ in range(self.n_aug)])
                logp = model(views).log_softmax(1)
                avg = logp.logsumexp(0) - math.log(self.n_aug)
                loss = self.sign * -(avg.exp() * avg).sum()
                loss.backward()
                opt.step()
                opt.zero_grad()
            with torch.no_grad():
                outs.append(model(one))
            delta.revert()
        return torch.cat(outs)
