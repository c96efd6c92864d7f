"""The distributed error classes torch._C exports; torch.distributed renames them on import."""

from __future__ import annotations


class _DistError(RuntimeError):
    pass


class _DistBackendError(_DistError):
    pass


class _DistStoreError(_DistError):
    pass


class _DistNetworkError(_DistError):
    pass


class _DistQueueEmptyError(_DistStoreError):
    pass


TORCH_C_NAMES = {"_DistError": _DistError, "_DistBackendError": _DistBackendError,
                 "_DistStoreError": _DistStoreError, "_DistNetworkError": _DistNetworkError,
                 "_DistQueueEmptyError": _DistQueueEmptyError}
ERRORS = (_DistError, _DistBackendError, _DistStoreError, _DistNetworkError, _DistQueueEmptyError)
# upstream registers them under their public names in torch.distributed
for _cls, _public in zip(ERRORS, ("DistError", "DistBackendError", "DistStoreError",
                                  "DistNetworkError", "QueueEmptyError")):
    _cls.__module__ = "torch.distributed"
    _cls.__name__ = _cls.__qualname__ = _public
