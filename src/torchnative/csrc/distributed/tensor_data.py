"""Tensor bytes as numpy arrays, sharing memory (public torch API only: reshape, view, numpy)."""

from __future__ import annotations

import numpy as np

_NP = {"float64": np.float64, "float32": np.float32, "float16": np.float16,
       "int64": np.int64, "int32": np.int32, "int16": np.int16, "int8": np.int8,
       "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
       "bool": np.bool_, "complex64": np.complex64, "complex128": np.complex128}


def numpy_dtype(dtype):
    name = str(dtype).removeprefix("torch.")
    if name in _NP:
        return np.dtype(_NP[name])
    if name == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return None  # float8 and friends: moved as bytes, never reduced


def dtype_name(t) -> str:
    return str(t.dtype).removeprefix("torch.")


class Buffer:
    """A contiguous byte view of a tensor; non-contiguous tensors go through a copy written back
    by ``commit`` (the collective's result lands in the caller's tensor)."""

    def __init__(self, tensor):
        self.tensor = tensor
        self.work = tensor if tensor.is_contiguous() else tensor.contiguous()
        self.raw = self.work.reshape(-1).view(_uint8()).numpy() if self.work.numel() else \
            np.empty(0, np.uint8)
        self.np_dtype = numpy_dtype(tensor.dtype)

    @property
    def values(self) -> np.ndarray:
        if self.np_dtype is None:
            raise TypeError(f"reductions over {self.tensor.dtype} are not supported")
        return self.raw.view(self.np_dtype)

    def commit(self) -> None:
        if self.work is not self.tensor:
            self.tensor.copy_(self.work)


def _uint8():
    import torch

    return torch.uint8


def describe(t) -> str:
    return f"{dtype_name(t)}{list(t.shape)}"
