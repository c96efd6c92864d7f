"""What every adaptation method declares, and the pieces most of them share.

A method holds configuration only (learning rate, thresholds): weights live in the model, the
base in the delta, and anything else it carries (optimizer, EMAs, teachers) in ``delta.state``.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from ..delta import select


class Method:
    name = "method"
    needs_backward = True
    updates = ""  # what the delta covers, in words

    def covers(self, model: nn.Module) -> list[str]:
        raise NotImplementedError

    def configure(self, model: nn.Module) -> None:
        """Put the model in the mode adaptation runs in (the wrapper records and restores it)."""

    def step(self, model: nn.Module, x, delta):
        """Predict ``x`` and adapt; returns the prediction."""
        raise NotImplementedError

    def predict(self, model: nn.Module, x):
        return model(x)

    def optimizer(self, model, delta, make):
        """The delta-owned optimizer over the covered parameters (created after every revert)."""
        opt = delta.state.get("optimizer")
        if opt is None:
            params = [delta._get(n) for n in delta.names if isinstance(delta._get(n), nn.Parameter)]
            opt = delta.state["optimizer"] = make(params)
        return opt

    def __repr__(self):
        keys = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({keys})"


def make_optimizer(kind: str, lr: float, momentum: float = 0.9, betas=(0.9, 0.999), wd: float = 0.0):
    kind = kind.lower()
    if kind == "adam":
        return lambda ps: torch.optim.Adam(ps, lr=lr, betas=betas, weight_decay=wd)
    if kind == "sgd":
        return lambda ps: torch.optim.SGD(ps, lr=lr, momentum=momentum, weight_decay=wd)
    raise ValueError(f"unknown optimizer {kind!r} (adam or sgd)")


def softmax_entropy(logits: torch.Tensor) -> torch.Tensor:
    """Entropy of softmax(logits) per sample (class dimension 1)."""
    return -(logits.softmax(1) * logits.log_softmax(1)).sum(1)


def norm_affine_covers(method: str, model: nn.Module) -> list[str]:
    return select.require(model, select.norm_affine(model), method,
                          "normalization (BatchNorm/LayerNorm/GroupNorm/RMSNorm with affine)")


def configure_norm_affine(model: nn.Module) -> None:
    """Tent's configuration: train mode, only norm affine parameters trainable, BatchNorm on
    the test batch's statistics without touching its running buffers."""
    model.train()
    model.requires_grad_(False)
    for _, m in select.norm_layers(model):
        for p in ("weight", "bias"):
            if isinstance(getattr(m, p, None), nn.Parameter):
                getattr(m, p).requires_grad_(True)
        if isinstance(m, select.BATCH_NORMS):
            m.track_running_stats = False
