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


ERRORS = (_DistError, _DistBackendError, _DistStoreError, _DistNetworkError, _DistQueueEmptyError)
for _cls in ERRORS:
    # upstream's pybind registration puts them in torch.distributed
    _cls.__module__ = "torch.distributed"
