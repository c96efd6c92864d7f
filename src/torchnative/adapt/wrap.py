"""``adapt.wrap(model, method=...)``: a model that predicts and, online, adapts its delta.

The wrapper records the model's configuration (train/eval flags, requires_grad, BatchNorm's
tracking and momentum) before the method changes it, and ``unwrap()`` puts it back. A batch with
NaN or inf is not learned from: it is counted in ``skipped`` and the delta is untouched; an update
that would make a covered tensor non-finite is rolled back and counted the same way.
"""

from __future__ import annotations

import torch
import torch.nn as nn

from ..delta import SessionDelta
from .method import Method


class _NonFinite(Exception):
    pass


def _finite(x) -> bool:
    if isinstance(x, torch.Tensor):
        return not x.is_floating_point() or bool(torch.isfinite(x).all())
    if isinstance(x, dict):
        return all(_finite(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return all(_finite(v) for v in x)
    return True


def _record(model: nn.Module):
    mods = [(m, m.training, getattr(m, "track_running_stats", None), getattr(m, "momentum", None))
            for m in model.modules()]
    grads = [(p, p.requires_grad) for p in model.parameters()]
    return mods, grads


def _restore(rec):
    mods, grads = rec
    for m, training, track, momentum in mods:
        m.training = training
        if track is not None:
            m.track_running_stats = track
        if momentum is not None and hasattr(m, "momentum"):
            m.momentum = momentum
        hook = m.__dict__.pop("_torchnative_hook", None)
        if hook is not None:
            hook.remove()
    for p, rg in grads:
        p.requires_grad_(rg)


class Adapted(nn.Module):
    def __init__(self, model: nn.Module, method: Method, delta_type=SessionDelta, parent=None,
                 **delta_kw):
        super().__init__()
        if not isinstance(model, nn.Module):
            raise TypeError(f"adapt.wrap: model must be a torch.nn.Module, got "
                            f"{type(model).__name__}")
        if isinstance(model, Adapted):
            raise ValueError("adapt.wrap: the model is wrapped already (an Adapted); wrap its "
                             ".model, or unwrap() it first")
        if not isinstance(method, Method):
            raise TypeError(f"method must be a torchnative.adapt method, got {type(method).__name__}")
        self.model = model
        self.method = method
        names = method.covers(model)  # refuses, naming the method and the layer type it needs
        self._config = _record(model)
        self.delta = delta_type(model, names, parent=parent, **delta_kw)
        method.configure(model)
        self.mode = "online"
        self.skipped = 0
        self.updates = 0
        self.resets = 0

    def online(self):
        self.mode = "online"
        return self

    def offline(self):
        self.mode = "offline"
        return self

    def revert(self):
        self.delta.revert()
        return self

    def unwrap(self) -> nn.Module:
        """Revert, close the delta and give back the model in its original configuration."""
        self.delta.close()
        _restore(self._config)
        release = getattr(self.method, "release", None)
        if release is not None:  # take off what covers() attached (e.g. LoRA factors)
            release(self.model)
        return self.model

    def forward(self, x):
        if self.mode == "offline" or not _finite(x):
            if self.mode == "online":
                self.skipped += 1
            with torch.no_grad():
                return self.method.predict(self.model, x)
        try:
            with self.delta.step():
                out = self.method.step(self.model, x, self.delta)
                if not _finite([self.delta._get(n) for n in self.delta.names]):
                    raise _NonFinite
        except _NonFinite:
            self.skipped += 1
            with torch.no_grad():
                return self.method.predict(self.model, x)
        self.resets += self.delta.state.pop("resets", 0)
        self.updates += 1
        return out.detach() if isinstance(out, torch.Tensor) else out


def wrap(model: nn.Module, method: Method, **kw) -> Adapted:
    return Adapted(model, method, **kw)
