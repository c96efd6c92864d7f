"""torch._C._dynamo: the C frame-evaluation hook behind torch.compile.

Installing a frame-evaluation callback (``set_eval_frame``) needs CPython's C API, so it refuses
by name and torch.compile cannot run. What upstream's Python calls while merely importing dynamo
(registering hooks and per-code strategies) is bookkeeping, and is kept as such.
"""

from __future__ import annotations

import weakref

from ..core.refuse import TorchnativeNotImplementedError

_state = {"guard_error_hook": None}
_code_strategies: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


class _FrameExecStrategy:
    """What the frame hook does with a code object: an action for the frame and for calls."""

    def __init__(self, cur_action=None, recursive_action=None):
        from ..core.enums import ENUMS

        default = ENUMS["torch._C._dynamo.eval_frame._FrameAction"].DEFAULT
        self.cur_action = default if cur_action is None else cur_action
        self.recursive_action = default if recursive_action is None else recursive_action


class NullStackValue:
    """The sentinel the bytecode debugger shows for a NULL on CPython's value stack."""

    def __repr__(self):
        return "NULL"


NULL_STACK_VALUE = NullStackValue()


def set_is_in_mode_without_ignore_compile_internals(value: bool) -> None:
    """A flag dynamo's guards read; recorded for completeness, as no guard runs here."""
    _state["in_mode_without_ignore_compile_internals"] = bool(value)


def set_eval_frame(callback):
    """Install a frame-evaluation callback; returns the previous one. Turning evaluation off
    (None/False, which ``torch._dynamo.disable`` does around every mode call) is our permanent
    state; installing a real callback is torch.compile, which refuses by name."""
    if callback is None or callback is False:
        return None
    raise TorchnativeNotImplementedError(
        "torch.compile (torch._C._dynamo.eval_frame.set_eval_frame)",
        "frame evaluation hooks need CPython's C API")


def get_eval_frame_callback():
    return None


def set_guard_error_hook(hook) -> None:
    _state["guard_error_hook"] = hook


def set_code_exec_strategy(code, strategy) -> None:
    _code_strategies[code] = strategy


TORCH_C = {
    "torch._C._dynamo.eval_frame.set_eval_frame": set_eval_frame,
    "torch._C._dynamo.eval_frame.get_eval_frame_callback": get_eval_frame_callback,
    "torch._C._dynamo.guards.set_is_in_mode_without_ignore_compile_internals":
        set_is_in_mode_without_ignore_compile_internals,
    "torch._C._dynamo.eval_frame.NULL_STACK_VALUE": NULL_STACK_VALUE,
    "torch._C._dynamo.eval_frame._FrameExecStrategy": _FrameExecStrategy,
    "torch._C._dynamo.eval_frame.set_guard_error_hook": set_guard_error_hook,
    "torch._C._dynamo.eval_frame.set_code_exec_strategy": set_code_exec_strategy,
}
