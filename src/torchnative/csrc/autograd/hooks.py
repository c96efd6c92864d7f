"""Saved-tensor hooks (torch.autograd.graph.saved_tensors_hooks)."""

from __future__ import annotations

import threading


class _TLS(threading.local):
    def __init__(self):
        self.stack: list = []
        self.disabled: str | None = None


TLS = _TLS()


def default_hooks():
    """(pack, unpack) in force for a tensor being saved now, or None (upstream saves without
    hooks while they are disabled)."""
    if not TLS.stack or TLS.disabled is not None:
        return None
    return TLS.stack[-1]


def push_saved_tensors_default_hooks(pack, unpack) -> None:
    if TLS.disabled is not None:
        raise RuntimeError(TLS.disabled)
    TLS.stack.append((pack, unpack))


def pop_saved_tensors_default_hooks() -> None:
    TLS.stack.pop()


def saved_tensors_hooks_disable(message: str, fail_if_non_empty: bool = True) -> None:
    TLS.disabled = message
    if fail_if_non_empty and TLS.stack:
        raise RuntimeError(message)


def saved_tensors_hooks_enable() -> None:
    TLS.disabled = None


def saved_tensors_hooks_is_enabled() -> bool:
    return TLS.disabled is None


def saved_tensors_hooks_get_disabled_error_message():
    return TLS.disabled


def top_saved_tensors_default_hooks(ignore_is_tracing: bool = False):
    return TLS.stack[-1] if TLS.stack else None


_A = "torch._C._autograd."
TORCH_C = {
    _A + "_push_saved_tensors_default_hooks": push_saved_tensors_default_hooks,
    _A + "_pop_saved_tensors_default_hooks": pop_saved_tensors_default_hooks,
    _A + "_saved_tensors_hooks_disable": saved_tensors_hooks_disable,
    _A + "_saved_tensors_hooks_enable": saved_tensors_hooks_enable,
    _A + "_saved_tensors_hooks_is_enabled": saved_tensors_hooks_is_enabled,
    _A + "_saved_tensors_hooks_get_disabled_error_message":
        saved_tensors_hooks_get_disabled_error_message,
    _A + "_top_saved_tensors_default_hooks": top_saved_tensors_default_hooks,
}
