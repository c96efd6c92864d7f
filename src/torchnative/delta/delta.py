"""A weight delta over base weights: the one object every adaptation produces.

A delta covers a chosen set of a model's parameters and buffers (by qualified name) and keeps a
copy of ONLY those tensors as they were when it was created (its base). The model's own tensors
hold base + offset; ``revert()`` writes the base back bit for bit. Whatever a method carries
besides weights (optimizer moments, EMAs, teachers, memory banks, Fisher estimates) lives in
``delta.state`` and is cleared with it, so a method holds nothing of its own.

Deltas stack: a delta created with ``parent=`` sits above it (base -> persistent -> session); each
layer reverts alone and the layers above keep their own offsets.
"""

from __future__ import annotations

import copy
from contextlib import contextmanager

import torch
import torch.nn as nn

from .lifetime import FEDERATED, PERSISTENT, REQUEST, SESSION, Lifetime


def tensor_nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


def state_nbytes(obj) -> int:
    """Bytes of every tensor reachable in a method's state (dicts, lists, optimizers)."""
    if isinstance(obj, torch.Tensor):
        return tensor_nbytes(obj)
    if isinstance(obj, torch.optim.Optimizer):
        return state_nbytes(list(obj.state.values()))
    if isinstance(obj, dict):
        return sum(state_nbytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(state_nbytes(v) for v in obj)
    return 0


def deepcopy_nbytes(model: nn.Module) -> int:
    """What a reference TTA implementation keeps to reset: a deepcopy of the whole state_dict."""
    return sum(tensor_nbytes(t) for t in model.state_dict().values())


def _snapshot(state: dict) -> dict:
    snap = {}
    for k, v in state.items():
        if isinstance(v, torch.optim.Optimizer):
            snap[k] = ("optimizer", copy.deepcopy(v.state_dict()))
        elif isinstance(v, nn.Module):  # a teacher network: its tensors by value
            snap[k] = ("module", {n: t.detach().clone() for n, t in v.state_dict().items()})
        else:
            snap[k] = ("value", copy.deepcopy(v))
    return snap


def _restore(state: dict, snap: dict) -> None:
    for k in list(state):
        if k not in snap:
            del state[k]
    for k, (kind, v) in snap.items():
        if kind == "optimizer":
            state[k].load_state_dict(v)
        elif kind == "module":
            with torch.no_grad():
                for n, t in state[k].state_dict().items():
                    t.copy_(v[n])
        else:
            state[k] = v


class Delta:
    """Covers ``names`` of ``model``. Subclasses fix the lifetime; this base is per-session."""

    lifetime: Lifetime = SESSION

    def __init__(self, model: nn.Module, names, *, parent: "Delta | None" = None):
        kind = type(self).__name__
        if not isinstance(model, nn.Module):
            raise TypeError(f"{kind}: model must be a torch.nn.Module, got {type(model).__name__}")
        if isinstance(names, str) or not hasattr(names, "__iter__"):
            raise TypeError(f"{kind}: names must be a list of parameter or buffer names, got "
                            f"{type(names).__name__}")
        names = list(dict.fromkeys(names))  # may be empty: a method that changes no weight
        for n in names:
            if not isinstance(n, str):
                raise TypeError(f"{kind}: names must be strings, got {type(n).__name__}")
        if parent is not None and not isinstance(parent, Delta):
            raise TypeError(f"{kind}: parent must be a Delta, got {type(parent).__name__}")
        if parent is not None:
            if parent.model is not model:
                raise ValueError("a delta can only stack on a delta of the same model")
            if parent.child is not None:
                raise ValueError("that delta already has a delta stacked on it; stack on the top")
        self.model = model
        self.names = tuple(names)
        for n in self.names:
            self._get(n)  # every name must resolve now, not at revert time
        self.base = {n: self._get(n).detach().clone() for n in self.names}
        from .store import model_signature
        self.model_signature = model_signature(model)  # the model as this layer's base saw it
        self.state: dict = {}
        self.parent, self.child = parent, None
        self.closed = False
        if parent is not None:
            parent.child = self

    # ------------------------------------------------------------------ tensors by name
    def _split(self, name: str):
        mod, _, attr = name.rpartition(".")
        return (self.model.get_submodule(mod) if mod else self.model), attr

    def _get(self, name: str) -> torch.Tensor:
        mod, attr = self._split(name)
        t = getattr(mod, attr, None)
        if not isinstance(t, torch.Tensor):
            raise KeyError(f"{name!r} is not a parameter or buffer of {type(self.model).__name__}")
        return t

    def _write(self, values: dict) -> None:
        with torch.no_grad():
            for n, v in values.items():
                self._get(n).copy_(v)

    def current(self) -> dict:
        return {n: self._get(n).detach().clone() for n in self.names}

    # ------------------------------------------------------------------ what it holds
    def offset(self) -> dict:
        """current - base for every covered tensor (what this layer adds)."""
        top = self._values_above()
        return {n: top[n] - self.base[n] for n in self.names}

    def _values_above(self) -> dict:
        """The values this layer's offset reaches: the next covering layer's base, or the model's."""
        out = {}
        for n in self.names:
            up = self.child
            while up is not None and n not in up.base:
                up = up.child
            out[n] = up.base[n] if up is not None else self._get(n).detach()
        return out

    @property
    def nbytes(self) -> int:
        """Bytes this delta holds: its base copies and its method state."""
        return sum(tensor_nbytes(t) for t in self.base.values()) + state_nbytes(self.state)

    def numel(self) -> int:
        return sum(t.numel() for t in self.base.values())

    def changed(self) -> list[str]:
        """names whose current value differs (bitwise) from this layer's base."""
        top = self._values_above()
        return [n for n in self.names if not _bitwise_equal(top[n], self.base[n])]

    # ------------------------------------------------------------------ revert and steps
    def revert(self) -> None:
        """This layer's offset out, bit for bit; layers above keep theirs. Method state cleared."""
        self._check_open()
        ups = []
        up = self.child
        while up is not None:
            ups.append(up)
            up = up.child
        new_vals = {}
        with torch.no_grad():
            for n in self.names:
                covering = [u for u in ups if n in u.base]
                tops = [u.base[n] for u in covering[1:]] + [self._get(n).detach()]
                offs = [t - u.base[n] for t, u in zip(tops, covering)]  # before any base moves
                below = self.base[n]
                for u, off in zip(covering, offs):  # each upper layer keeps its own offset
                    u.base[n] = below.clone()
                    below = below + off
                new_vals[n] = below
            self._write(new_vals)
        self.state.clear()
        self._zero_grads()

    def _zero_grads(self):
        for n in self.names:
            t = self._get(n)
            if isinstance(t, nn.Parameter):
                t.grad = None

    @contextmanager
    def step(self):
        """One update as a transaction: on any exception, covered tensors and method state are
        restored to what they were before the step, and the exception propagates."""
        self._check_open()
        before = self.current()
        snap = _snapshot(self.state)
        try:
            yield self
        except BaseException:
            self._write(before)
            _restore(self.state, snap)
            self._zero_grads()
            raise

    def close(self) -> None:
        """Revert and leave the stack (layers above are re-based onto the layer below)."""
        if self.closed:
            return
        self.revert()
        if self.parent is not None:
            self.parent.child = self.child
        if self.child is not None:
            self.child.parent = self.parent
        self.parent = self.child = None
        self.closed = True

    def _check_open(self):
        if self.closed:
            raise RuntimeError(f"this {self.lifetime.name} delta was closed")

    # ------------------------------------------------------------------ lifetime questions
    def discard(self) -> None:
        """The system drops it (background, user switch): only a discardable lifetime allows it."""
        self.lifetime.forbid("be discarded by the system", self.lifetime.discardable)
        self.close()

    def save(self, path, **meta) -> None:
        self.lifetime.forbid("be saved to survive a restart", self.lifetime.survives_restart)
        from .store import save
        save(self, path, **meta)

    def export(self) -> dict:
        """The offset, for transmission off the device."""
        self.lifetime.forbid("leave the device", self.lifetime.leaves_device)
        return {n: t.clone() for n, t in self.offset().items()}

    def __repr__(self):
        return (f"{type(self).__name__}({len(self.names)} tensors, {self.numel()} values, "
                f"{self.nbytes} bytes, lifetime={self.lifetime.name!r})")


def _bitwise_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        return bool(torch.equal(a.reshape(-1).view(_int_of(a.dtype)), b.reshape(-1).view(_int_of(b.dtype))))
    return bool(torch.equal(a, b))


def _int_of(dtype):
    return {torch.float64: torch.int64, torch.float32: torch.int32, torch.float16: torch.int16,
            torch.bfloat16: torch.int16}[dtype]


class SessionDelta(Delta):
    lifetime = SESSION


class RequestDelta(Delta):
    """Reverted when the request ends: use as ``with RequestDelta(model, names): ...``."""

    lifetime = REQUEST

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class PersistentDelta(Delta):
    """A user's own delta: saved with safetensors, restored by a new process."""

    lifetime = PERSISTENT

    def __init__(self, model, names, *, user: str, parent=None):
        super().__init__(model, names, parent=parent)
        self.user = str(user)

    @classmethod
    def load(cls, model, path, *, user: str, parent=None):
        from .store import load
        return load(cls, model, path, user=user, parent=parent)


class FederatedDelta(Delta):
    """The only lifetime whose offset may leave the device."""

    lifetime = FEDERATED

    def __init__(self, model, names, *, user: str = "", parent=None):
        super().__init__(model, names, parent=parent)
        self.user = str(user)

    @classmethod
    def load(cls, model, path, *, user: str = "", parent=None):
        from .store import load
        return load(cls, model, path, user=user, parent=parent)
