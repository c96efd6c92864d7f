"""functorch's C++ state (torch._C._functorch and friends): no transform is ever active here.

vmap/grad transforms (the FuncTorch dispatch keys) are not implemented; their entry points stay
refusing. What upstream calls outside transforms (a guard, "is anything active?") behaves.
"""

from __future__ import annotations


class DisableFuncTorch:
    """Guard that disables functorch transforms; with none active there is nothing to do."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def are_functorch_transforms_active() -> bool:
    return False


def _never(tensor) -> bool:
    """No functorch wrapper tensor exists without a transform."""
    return False


def maybe_get_level(tensor) -> int:
    return -1


def maybe_get_bdim(tensor) -> int:
    return -1


def maybe_current_level():
    return None


def get_unwrapped(tensor):
    raise RuntimeError("get_unwrapped: the tensor is not a functorch wrapper")


def unwrap_if_dead(tensor):
    return tensor


def get_interpreter_stack() -> list:
    return []


def peek_interpreter_stack():
    """The innermost active transform's interpreter: there is none."""
    return None


def get_dynamic_layer_stack_depth() -> int:
    return 0


def count_jvp_interpreters() -> int:
    return 0


_flags = {"inplace_requires_grad": False, "single_level_autograd_function": False}


def set_inplace_requires_grad_allowed(allowed: bool) -> None:
    _flags["inplace_requires_grad"] = bool(allowed)


def get_inplace_requires_grad_allowed() -> bool:
    return _flags["inplace_requires_grad"]


def set_single_level_autograd_function_allowed(allowed: bool) -> None:
    _flags["single_level_autograd_function"] = bool(allowed)


def get_single_level_autograd_function_allowed() -> bool:
    return _flags["single_level_autograd_function"]


_F = "torch._C._functorch."

TORCH_C = {
    **{_F + n: _never for n in ("is_batchedtensor", "is_functionaltensor",
                                "is_functorch_wrapped_tensor", "is_gradtrackingtensor",
                                "is_legacy_batchedtensor")},
    _F + "maybe_get_level": maybe_get_level,
    _F + "maybe_get_bdim": maybe_get_bdim,
    _F + "maybe_current_level": maybe_current_level,
    _F + "get_unwrapped": get_unwrapped,
    _F + "unwrap_if_dead": unwrap_if_dead,
    _F + "get_interpreter_stack": get_interpreter_stack,
    _F + "peek_interpreter_stack": peek_interpreter_stack,
    _F + "get_dynamic_layer_stack_depth": get_dynamic_layer_stack_depth,
    _F + "count_jvp_interpreters": count_jvp_interpreters,
    _F + "set_inplace_requires_grad_allowed": set_inplace_requires_grad_allowed,
    _F + "get_inplace_requires_grad_allowed": get_inplace_requires_grad_allowed,
    _F + "set_single_level_autograd_function_allowed": set_single_level_autograd_function_allowed,
    _F + "get_single_level_autograd_function_allowed": get_single_level_autograd_function_allowed,
    "torch._C._DisableFuncTorch": DisableFuncTorch,
    "torch._C._are_functorch_transforms_active": are_functorch_transforms_active,
}
