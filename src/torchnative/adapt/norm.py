"""Normalization statistics: BatchNorm predicts with the test batch's own statistics.

``NormStats()`` follows Tent's ``norm.py`` (Schneider et al. / Nado et al.): BatchNorm layers in
train mode, running statistics updated with momentum 0.1 (the delta covers them), the
prediction normalised by the batch's statistics; offline predictions use the adapted running
statistics. ``NormStats(alpha=a)`` is the single-sample variant (Schneider et al., NeurIPS 2020):
each forward normalises with a·(test statistics) + (1 − a)·(source statistics) and changes no
state, so it works at batch size 1. No backward pass either way.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..delta import select
from .method import Method
from . import check


class NormStats(Method):
    name = "norm"
    needs_backward = False
    updates = "BatchNorm running_mean, running_var, num_batches_tracked"

    def __init__(self, momentum: float = 0.1, alpha: float | None = None):
        self.momentum = check.real("NormStats", "momentum", momentum, hi=1.0)
        self.alpha = check.real("NormStats", "alpha", alpha, hi=1.0, optional=True)

    def covers(self, model):
        return select.require(model, select.bn_stats(model), "NormStats",
                              "BatchNorm with running statistics")

    def configure(self, model):
        model.eval()
        for _, m in select.batch_norms(model):
            if self.alpha is None:
                m.train()
                m.momentum = self.momentum
            else:
                # removed with the wrapper's configuration (see wrap.Adapted.unwrap)
                m._torchnative_hook = m.register_forward_hook(_mixed(self.alpha))

    def step(self, model, x, delta):
        with torch.no_grad():  # statistics only: no graph
            return model(x)

    def predict(self, model, x):
        if self.alpha is not None:
            return model(x)
        # adapted running statistics, not the batch's: switch BatchNorm to eval for this call
        bns = [m for _, m in select.batch_norms(model)]
        for m in bns:
            m.eval()
        try:
            return model(x)
        finally:
            for m in bns:
                m.train()


def _mixed(alpha: float):
    def hook(m, args, out):
        x = args[0]
        dims = [0] + list(range(2, x.dim()))
        mean = x.mean(dims)
        var = x.var(dims, unbiased=False)
        mu = alpha * mean + (1 - alpha) * m.running_mean
        sig = alpha * var + (1 - alpha) * m.running_var
        return F.batch_norm(x, mu, sig, m.weight, m.bias, False, 0.0, m.eps)
    return hook
