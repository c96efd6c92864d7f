"""__torch_dispatch__: TorchDispatchMode stacks and tensor subclasses, ahead of the kernels.

Mirrors the Python dispatch key: when a mode is on the stack, the top mode's
``__torch_dispatch__(func, types, args, kwargs)`` runs with itself popped for the duration;
otherwise each argument subclass that overrides ``__torch_dispatch__`` is tried in order until
one does not return NotImplemented. ``func`` is upstream's OpOverload object.
"""

from __future__ import annotations

import threading

from ..core.tensor import TensorBase
# the door (which imports this module) installs how a call continues below Python dispatch
from ..ops.dispatcher import DOOR, REGISTRY


class _TLS(threading.local):
    def __init__(self):
        self.stack: list = []
        self.infra: dict = {}  # infra modes by _TorchDispatchModeKey (fake, proxy, functional)
        self.disabled = 0


TLS = _TLS()


_OVERRIDES: dict = {}


def _overrides(t) -> bool:
    """Does ``t``'s class override __torch_dispatch__? (cached per class: the door's hot path)"""
    cls = type(t)
    hit = _OVERRIDES.get(cls)
    if hit is None:
        td = getattr(cls, "__torch_dispatch__", None)
        hit = _OVERRIDES[cls] = td is not None and \
            getattr(td, "__func__", td) is not disabled_torch_dispatch_impl
    return hit


def _tensor_args(args, kwargs):
    for a in list(args) + list(kwargs.values()):
        if isinstance(a, TensorBase):
            yield a
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, TensorBase):
                    yield x


def wants_python_dispatch(args, kwargs) -> bool:
    if TLS.disabled:
        return False
    if TLS.stack or TLS.infra:
        return True
    for a in args:
        if isinstance(a, TensorBase):
            if _overrides(a):
                return True
        elif isinstance(a, (list, tuple)) and any(isinstance(x, TensorBase) and _overrides(x)
                                              for x in a):
            return True
    if kwargs:
        for a in kwargs.values():
            if isinstance(a, TensorBase):
                if _overrides(a):
                    return True
            elif isinstance(a, (list, tuple)) and any(isinstance(x, TensorBase) and _overrides(x)
                                                  for x in a):
                return True
    return False


def _modes() -> list:
    """User modes above infra modes, as upstream orders them."""
    return [m for m in TLS.stack]


def dispatch(op, args, kwargs):
    from .boxing import normalize

    func = DOOR["op_overload"](op)
    args, kwargs = normalize(op, args, kwargs)
    below = args, kwargs
    # a Python number bound to a Tensor parameter reaches __torch_dispatch__ as the number again
    # (upstream's toPyObject unwraps wrapped-number tensors when it boxes the call for Python)
    args = tuple(_unwrap_number(a) for a in args)
    kwargs = {k: _unwrap_number(v) for k, v in kwargs.items()}
    overloaded = []
    for t in _tensor_args(args, kwargs):
        if _overrides(t) and type(t) not in overloaded:
            overloaded.append(type(t))
    types = tuple(overloaded)
    if TLS.stack:
        mode = TLS.stack.pop()
        try:
            result = mode.__torch_dispatch__(func, types, args, kwargs)
        finally:
            TLS.stack.append(mode)
        if result is not NotImplemented:
            return result
    elif TLS.infra:
        key = sorted(TLS.infra)[-1]
        mode = TLS.infra.pop(key)
        try:
            result = mode.__torch_dispatch__(func, types, args, kwargs)
        finally:
            TLS.infra[key] = mode
        if result is not NotImplemented:
            return result
    for cls in overloaded:
        result = cls.__torch_dispatch__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    if overloaded:
        names = ", ".join(c.__name__ for c in overloaded)
        raise TypeError(f"Multiple dispatch failed for '{func}'; all __torch_dispatch__ handlers "
                        f"returned NotImplemented:\n\n  - tensor subclass {names}")
    return DOOR["backend_dispatch"](op, *below)


def _unwrap_number(a):
    if isinstance(a, TensorBase) and a._wrapped:
        sym = getattr(a, "_tn_wrapped_number", None)
        return a._scalar_value() if sym is None else sym
    return a


# --- torch._C functions for the stack ---------------------------------------------------------

def push_on_torch_dispatch_stack(mode) -> None:
    key = getattr(mode, "_mode_key", None)
    if key is not None:
        TLS.infra[key] = mode
    else:
        TLS.stack.append(mode)


def pop_torch_dispatch_stack(mode_key=None):
    if mode_key is not None:
        return TLS.infra.pop(mode_key)
    if TLS.stack:
        return TLS.stack.pop()
    if TLS.infra:
        return TLS.infra.pop(sorted(TLS.infra)[-1])
    raise RuntimeError("Trying to pop from empty mode stack")


def get_dispatch_stack_at(i: int):
    full = list(TLS.infra.values()) + TLS.stack
    return full[i]


def len_torch_dispatch_stack() -> int:
    return len(TLS.stack) + len(TLS.infra)


def get_dispatch_mode(key):
    return TLS.infra.get(key)


def set_dispatch_mode(mode) -> None:
    TLS.infra[mode._mode_key] = mode


def unset_dispatch_mode(key):
    return TLS.infra.pop(key, None)


def disabled_torch_dispatch_impl(func, types, args=(), kwargs=None):
    """Tensor.__torch_dispatch__'s default: run the operator below the Python key."""
    name = func.name() if callable(getattr(func, "name", None)) else str(func)
    qual, _, overload = name.partition(".")
    return DOOR["backend_dispatch"](REGISTRY.find(qual, overload), tuple(args),
                                    dict(kwargs or {}))


class DisableTorchDispatch:
    def __enter__(self):
        TLS.disabled += 1
        return self

    def __exit__(self, *exc):
        TLS.disabled -= 1
        return False


TORCH_C = {
    "torch._C._push_on_torch_dispatch_stack": push_on_torch_dispatch_stack,
    "torch._C._pop_torch_dispatch_stack": pop_torch_dispatch_stack,
    "torch._C._get_dispatch_stack_at": get_dispatch_stack_at,
    "torch._C._len_torch_dispatch_stack": len_torch_dispatch_stack,
    "torch._C._get_dispatch_mode": get_dispatch_mode,
    "torch._C._set_dispatch_mode": set_dispatch_mode,
    "torch._C._unset_dispatch_mode": unset_dispatch_mode,
    "torch._C._disabled_torch_dispatch_impl": disabled_torch_dispatch_impl,
    "torch._C._DisableTorchDispatch": DisableTorchDispatch,
}
