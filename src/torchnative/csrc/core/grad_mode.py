"""Thread-local autograd modes: grad mode, inference mode, and the small switches upstream keeps
beside them (view replay, multithreading, grad layout enforcement)."""

from __future__ import annotations

import threading

from .torch_function import called_by_torch_c, is_torch_function_mode_enabled


class _TLS(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False
        self.view_replay = False
        self.fw_grad = True
        self.multithreading = True
        self.grad_layout_enforcement = True


TLS = _TLS()


def is_grad_enabled() -> bool:
    return TLS.grad_enabled


def _set_grad_enabled(enabled: bool) -> None:
    if is_torch_function_mode_enabled() and not called_by_torch_c(1):
        # a torch function mode sees it, as upstream's binding hands it to one (no tensor
        # argument: only modes)
        import torch
        from torch.overrides import handle_torch_function

        return handle_torch_function(torch._C._set_grad_enabled, (), enabled)
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    TLS.grad_enabled = enabled


def is_inference_mode_enabled() -> bool:
    return TLS.inference


class InferenceMode:
    """The guard torch.inference_mode enters and exits."""

    def __init__(self, enabled: bool = True):
        self._enabled = bool(enabled)
        self._saved = None

    def __enter__(self):
        # upstream's c10::InferenceMode sets grad mode to the opposite of inference mode, so
        # inference_mode(False) turns grad mode on, even inside no_grad
        self._saved = (TLS.inference, TLS.grad_enabled, TLS.fw_grad)
        TLS.inference = self._enabled
        TLS.grad_enabled = TLS.fw_grad = not self._enabled
        return self

    def __exit__(self, *exc):
        TLS.inference, TLS.grad_enabled, TLS.fw_grad = self._saved
        return False


def _flag(name: str):
    def get() -> bool:
        return getattr(TLS, name)

    def set_(value: bool) -> None:
        setattr(TLS, name, bool(value))

    return get, set_


_is_view_replay, _set_view_replay = _flag("view_replay")
_is_fw_grad, _set_fw_grad = _flag("fw_grad")
_is_multithreading, _set_multithreading = _flag("multithreading")
_is_layout_enf, _set_layout_enf = _flag("grad_layout_enforcement")

TORCH_C = {
    "torch._C.is_grad_enabled": is_grad_enabled,
    "torch._C._set_grad_enabled": _set_grad_enabled,
    "torch._C.is_inference_mode_enabled": is_inference_mode_enabled,
    "torch._C._InferenceMode": InferenceMode,
    "torch._C._is_view_replay_enabled": _is_view_replay,
    "torch._C._set_view_replay_enabled": _set_view_replay,
    "torch._C._is_fwd_grad_enabled": _is_fw_grad,
    "torch._C._set_fwd_grad_enabled": _set_fw_grad,
    "torch._C._is_multithreading_enabled": _is_multithreading,
    "torch._C._set_multithreading_enabled": _set_multithreading,
    "torch._C._is_grad_layout_enforcement_enabled": _is_layout_enf,
    "torch._C._set_grad_layout_enforcement_enabled": _set_layout_enf,
}
