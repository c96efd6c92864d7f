"""__torch_function__ state: the enable/disable state, the mode stack, and the has-override tests
(thread-local state under the binding layer, as upstream keeps it in ATen's PythonTorchFunctionTLS).

Mirrors torch/csrc/utils/disable_torch_function.cpp and python_arg_parser's checks: exact
``Tensor``/``Parameter`` and basic Python types never dispatch; anything else dispatches if its
type defines ``__torch_function__`` other than the disabled default.
"""

from __future__ import annotations

import os
import sys
import threading

from .enums import TorchFunctionState
from .python_classes import parameter_class, tensor_class

_BASIC = (int, float, complex, bool, str, bytes, type(None), list, tuple, dict, type(Ellipsis),
          slice)


class _TLS(threading.local):
    def __init__(self):
        self.state = TorchFunctionState.ENABLED
        self.stack: list = []


TLS = _TLS()


def disabled_torch_function_impl(func, types, args=(), kwargs=None):
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


def _exact_tensor_types() -> tuple:
    return tuple(c for c in (tensor_class(), parameter_class()) if c is not None)


_OVERRIDE_BY_TYPE: dict = {t: False for t in _BASIC}


def _has_attr_override(obj) -> bool:
    """Does ``obj``'s type define its own __torch_function__? (cached per type: hot path)"""
    tp = type(obj)
    hit = _OVERRIDE_BY_TYPE.get(tp)
    if hit is None:
        exact = _exact_tensor_types()
        if tp in exact:
            hit = False
        else:
            tf = getattr(tp, "__torch_function__", None)
            hit = tf is not None and getattr(tf, "__func__", tf) is not disabled_torch_function_impl
        if exact:  # only once torch.Tensor exists can the answer be final
            _OVERRIDE_BY_TYPE[tp] = hit
    return hit


# torch._C's own code: this package (generated autograd code is named as its files too)
_TORCH_C_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# the binding layer's entry points that hand a call on to another (``Tensor.__getitem__``'s fast
# path, the operators' dunders): the caller is whoever called them
_ENTRY_CODES: set = set()


def entry_point(fn):
    """Marks ``fn`` as an entry point that ``called_by_torch_c`` looks through."""
    _ENTRY_CODES.add(fn.__code__)
    return fn


def called_by_torch_c(depth: int) -> bool:
    """Is the caller ``depth`` frames above the asking function torch._C's own code (a kernel,
    autograd, the bindings' argument parsing)? Upstream implements those in C++, whose calls of a
    Tensor's methods and properties no __torch_function__ override or mode sees; ours are Python
    calls, told apart by where they come from (asked only where an override or a mode could
    answer)."""
    frame = sys._getframe(depth + 1)
    while frame.f_code in _ENTRY_CODES:
        frame = frame.f_back
    return frame.f_code.co_filename.startswith(_TORCH_C_DIR)


def self_asks(self, depth: int) -> bool:
    """Does a method or property of ``self``, called ``depth`` frames above, ask __torch_function__
    (python_variable*.cpp's ``check_has_torch_function(self)``), torch._C's own calls aside?
    (Its callers first rule out a plain tensor under no mode, which never asks.)"""
    return wants_torch_function((self,)) and not called_by_torch_c(depth + 1)


def overridable_arguments(args, kwargs) -> list:
    """The values __torch_function__ overrides are looked for in: the arguments, with tensors
    inside lists too, as upstream's parser collects them from TensorList arguments."""
    out = []
    for a in (*args, *kwargs.values()):
        if type(a) in (list, tuple):
            out.extend(a)
        else:
            out.append(a)
    return out


def wants_torch_function(values) -> bool:
    """Does a call with these arguments go to __torch_function__ first, as upstream's argument
    parser decides: a mode on the stack (unless every torch function is disabled), or, while
    subclass overrides are enabled, a tensor-like among the values (inside lists too)."""
    state = TLS.state
    if TLS.stack and state != 2:
        return True
    if state != 0:
        return False  # subclass overrides are disabled (DisableTorchFunction[Subclass])
    for v in values:
        if type(v) in (list, tuple):
            for x in v:
                if _has_attr_override(x):
                    return True
        elif _has_attr_override(v):
            return True
    return False


def is_torch_function_enabled() -> bool:
    return TLS.state == TorchFunctionState.ENABLED


def is_torch_function_all_disabled() -> bool:
    return TLS.state == TorchFunctionState.ALL_DISABLED


def is_torch_function_mode_enabled() -> bool:
    return bool(TLS.stack) and TLS.state != TorchFunctionState.ALL_DISABLED


def _check(obj) -> bool:
    return TLS.state == TorchFunctionState.ENABLED and _has_attr_override(obj)


def has_torch_function(args) -> bool:
    if is_torch_function_mode_enabled():
        return True
    return any(_check(a) for a in args)


def has_torch_function_unary(obj) -> bool:
    return is_torch_function_mode_enabled() or _check(obj)


def has_torch_function_variadic(*args) -> bool:
    return has_torch_function(args)


def get_torch_function_state():
    return TLS.state


def set_torch_function_state(state) -> None:
    TLS.state = TorchFunctionState(state)


class _StateGuard:
    _state = TorchFunctionState.ALL_DISABLED

    def __enter__(self):
        self._saved = TLS.state
        if TLS.state == TorchFunctionState.ENABLED or self._state == TorchFunctionState.ALL_DISABLED:
            TLS.state = self._state
        return self

    def __exit__(self, *exc):
        TLS.state = self._saved
        return False


class DisableTorchFunction(_StateGuard):
    _state = TorchFunctionState.ALL_DISABLED


class DisableTorchFunctionSubclass(_StateGuard):
    _state = TorchFunctionState.SUBCLASSES_DISABLED


def push_on_torch_function_stack(mode) -> None:
    TLS.stack.append(mode)


def pop_torch_function_stack():
    if not TLS.stack:
        raise RuntimeError("Trying to pop from empty mode stack")
    return TLS.stack.pop()


def get_function_stack_at(i: int):
    return TLS.stack[i]


def len_torch_function_stack() -> int:
    return len(TLS.stack)


TORCH_C = {
    "torch._C._disabled_torch_function_impl": disabled_torch_function_impl,
    "torch._C._has_torch_function": has_torch_function,
    "torch._C._has_torch_function_unary": has_torch_function_unary,
    "torch._C._has_torch_function_variadic": has_torch_function_variadic,
    "torch._C._is_torch_function_enabled": is_torch_function_enabled,
    "torch._C._is_torch_function_all_disabled": is_torch_function_all_disabled,
    "torch._C._is_torch_function_mode_enabled": is_torch_function_mode_enabled,
    "torch._C._get_torch_function_state": get_torch_function_state,
    "torch._C._set_torch_function_state": set_torch_function_state,
    "torch._C.DisableTorchFunction": DisableTorchFunction,
    "torch._C.DisableTorchFunctionSubclass": DisableTorchFunctionSubclass,
    "torch._C._push_on_torch_function_stack": push_on_torch_function_stack,
    "torch._C._pop_torch_function_stack": pop_torch_function_stack,
    "torch._C._get_function_stack_at": get_function_stack_at,
    "torch._C._len_torch_function_stack": len_torch_function_stack,
}
