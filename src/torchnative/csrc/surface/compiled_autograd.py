"""torch._C._dynamo.compiled_autograd: compiled autograd is never on here (torch.compile
refuses by name), so the only compiler that can be set is none. torch.func's grad transforms
set "none" around every backward they run and restore the previous value after."""

from __future__ import annotations

from ..core.refuse import TorchnativeNotImplementedError

_state = {"compiler": None, "dynamic": False}


def set_autograd_compiler(autograd_compiler, dynamic: bool):
    if autograd_compiler is not None:
        raise TorchnativeNotImplementedError(
            "torch._C._dynamo.compiled_autograd.set_autograd_compiler with a compiler",
            "compiled autograd needs torch.compile, which torchnative does not have")
    prior = (_state["compiler"], _state["dynamic"])
    _state["dynamic"] = bool(dynamic)
    return prior


TORCH_C = {"torch._C._dynamo.compiled_autograd.set_autograd_compiler": set_autograd_compiler}
