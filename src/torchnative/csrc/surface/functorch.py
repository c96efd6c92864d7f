"""torch._C._functorch: the level stack, BatchedTensor and grad levels (csrc/functorch).

vmap and the grad transforms (grad, grad_and_value, vjp, jacrev) run upstream's Python
(torch/_functorch) over these names. Forward-mode levels (jvp) and functionalization are not
here; what asks for upstream's interpreter objects (autograd.Function under a transform)
refuses by name.
"""

from __future__ import annotations

from ..core.refuse import TorchnativeNotImplementedError
from ..functorch import functionalize, levels
from ..functorch.batched import (add_batch_dim, batched_info, is_batched, remove_batch_dim,
                                 unwrap_batched)
from ..functorch.grad_levels import (grad_decrement_nesting, grad_increment_nesting,
                                     unwrap_for_grad, wrap_for_grad)


class DisableFuncTorch:
    """Guard that disables functorch transforms for its duration."""

    def __enter__(self):
        self._saved = levels.TLS.stack, levels.TLS.vmap
        levels.TLS.stack, levels.TLS.vmap = [], 0
        return self

    def __exit__(self, *exc):
        levels.TLS.stack, levels.TLS.vmap = self._saved
        return False


def are_functorch_transforms_active() -> bool:
    return levels.depth() > 0


def vmap_increment_nesting(batch_size: int, randomness: str) -> int:
    if randomness not in ("error", "same", "different"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    return levels.push("vmap", batch_size=int(batch_size), randomness=randomness).number


def vmap_decrement_nesting() -> int:
    return levels.pop("vmap").number


def _never(tensor) -> bool:
    return False


def is_functorch_wrapped_tensor(tensor) -> bool:
    return is_batched(tensor)


def maybe_get_level(tensor) -> int:
    info = batched_info(tensor)
    return -1 if info is None else info[2].number


def maybe_get_bdim(tensor) -> int:
    info = batched_info(tensor)
    return -1 if info is None else info[1]


def current_level() -> int:
    level = levels.current()
    if level is None:
        raise RuntimeError("current_level: no functorch transform is active")
    return level.number


def maybe_current_level():
    level = levels.current()
    return None if level is None else level.number


def get_unwrapped(tensor):
    info = batched_info(tensor)
    if info is None:
        raise RuntimeError("get_unwrapped: the tensor is not a functorch wrapper")
    return info[0]


def unwrap_if_dead(tensor):
    info = batched_info(tensor)
    if info is not None and not info[2].alive:
        value, bdim, _ = info
        return value
    return tensor


def _interpreters():
    raise TorchnativeNotImplementedError(
        "torch._C._functorch interpreter objects (peek_interpreter_stack / "
        "get_interpreter_stack while a transform is active)",
        "torchnative's functorch levels are not upstream's C++ interpreters; "
        "autograd.Function under vmap/grad needs them")


def get_interpreter_stack():
    if levels.depth() == 0:
        return None
    _interpreters()


def peek_interpreter_stack():
    if levels.depth() == 0:
        return None
    _interpreters()


def get_dynamic_layer_stack_depth() -> int:
    return levels.depth()


def count_jvp_interpreters() -> int:
    return sum(1 for lvl in levels.stack() if lvl.kind == "jvp")


_flags = {"inplace_requires_grad": False, "single_level_autograd_function": False,
          "vmap_fallback_warning": False, "vmap_fallback": True}


def set_inplace_requires_grad_allowed(allowed: bool) -> None:
    _flags["inplace_requires_grad"] = bool(allowed)


def get_inplace_requires_grad_allowed() -> bool:
    return _flags["inplace_requires_grad"]


def set_single_level_autograd_function_allowed(allowed: bool) -> None:
    _flags["single_level_autograd_function"] = bool(allowed)


def get_single_level_autograd_function_allowed() -> bool:
    return _flags["single_level_autograd_function"]


def set_vmap_fallback_warning_enabled(enabled: bool) -> None:
    _flags["vmap_fallback_warning"] = bool(enabled)


def is_vmap_fallback_warning_enabled() -> bool:
    return _flags["vmap_fallback_warning"]


def func_increment_nesting(reapply_views: bool) -> int:
    return levels.push("functionalize", reapply_views=bool(reapply_views)).number


def func_decrement_nesting() -> int:
    return levels.pop("functionalize").number


def wrap_functional_tensor(tensor, level: int):
    return functionalize.wrap(tensor, level)


def unwrap_functional_tensor(tensor, add_back_views: bool):
    if functionalize.state(tensor) is None:
        raise RuntimeError("_unwrap_functional_tensor: expected a functional tensor")
    return functionalize.unwrap_for_exit(tensor)


def assert_wrapped_functional(unwrapped, wrapped) -> None:
    if functionalize.state(wrapped) is None or functionalize.state(unwrapped) is not None:
        raise RuntimeError("_assert_wrapped_functional: expected a plain tensor and its "
                           "functional wrapper")


def propagate_functional_input_mutation(unwrapped, wrapped) -> None:
    """A mutated input's new value is copied back into the caller's tensor (as upstream's, an
    aten::copy_ a trace records); an input left alone is not touched."""
    functionalize.sync(wrapped)
    if not functionalize.has_data_mutation(wrapped):
        return
    inner = functionalize.state(wrapped).value
    with functionalize.skipping():
        if tuple(unwrapped.shape) != tuple(inner.shape):
            unwrapped.as_strided_(inner.shape, inner.stride())
        unwrapped.copy_(inner)


def is_functional(tensor) -> bool:
    return functionalize.state(tensor) is not None


_F = "torch._C._functorch."

TORCH_C = {
    **{_F + n: _never for n in ("is_gradtrackingtensor", "is_legacy_batchedtensor")},
    _F + "is_functionaltensor": is_functional,
    _F + "_func_increment_nesting": func_increment_nesting,
    _F + "_func_decrement_nesting": func_decrement_nesting,
    _F + "_wrap_functional_tensor": wrap_functional_tensor,
    _F + "_unwrap_functional_tensor": unwrap_functional_tensor,
    _F + "_assert_wrapped_functional": assert_wrapped_functional,
    _F + "_propagate_functional_input_mutation": propagate_functional_input_mutation,
    _F + "is_batchedtensor": is_batched,
    _F + "is_functorch_wrapped_tensor": is_functorch_wrapped_tensor,
    _F + "maybe_get_level": maybe_get_level,
    _F + "maybe_get_bdim": maybe_get_bdim,
    _F + "current_level": current_level,
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
    _F + "_set_vmap_fallback_warning_enabled": set_vmap_fallback_warning_enabled,
    _F + "_is_vmap_fallback_warning_enabled": is_vmap_fallback_warning_enabled,
    _F + "_vmap_increment_nesting": vmap_increment_nesting,
    _F + "_vmap_decrement_nesting": vmap_decrement_nesting,
    _F + "_add_batch_dim": add_batch_dim,
    _F + "_remove_batch_dim": remove_batch_dim,
    _F + "_unwrap_batched": unwrap_batched,
    _F + "_grad_increment_nesting": grad_increment_nesting,
    _F + "_grad_decrement_nesting": grad_decrement_nesting,
    _F + "_wrap_for_grad": wrap_for_grad,
    _F + "_unwrap_for_grad": unwrap_for_grad,
    "torch._C._DisableFuncTorch": DisableFuncTorch,
    "torch._C._are_functorch_transforms_active": are_functorch_transforms_active,
}
