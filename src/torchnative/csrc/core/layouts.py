"""torch.layout, torch.memory_format and torch.qscheme: named singletons upstream injects."""

from __future__ import annotations


class _Named:
    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


class layout(_Named):
    __slots__ = ()

    def __reduce__(self):
        raise TypeError("cannot pickle 'layout' object")


class memory_format(_Named):
    __slots__ = ()


class qscheme(_Named):
    __slots__ = ()


for _cls in (layout, memory_format, qscheme):
    _cls.__module__ = "torch"

LAYOUTS = {n: layout(n) for n in ("strided", "sparse_coo", "sparse_csr", "sparse_csc",
                                  "sparse_bsr", "sparse_bsc", "_mkldnn", "jagged")}
MEMORY_FORMATS = {n: memory_format(n) for n in ("preserve_format", "contiguous_format",
                                                "channels_last", "channels_last_3d")}
QSCHEMES = {n: qscheme(n) for n in ("per_tensor_affine", "per_channel_affine",
                                    "per_tensor_symmetric", "per_channel_symmetric",
                                    "per_channel_affine_float_qparams")}
BY_NAME = {**LAYOUTS, **MEMORY_FORMATS, **QSCHEMES}
CLASSES = {"Layout": layout, "MemoryFormat": memory_format, "QScheme": qscheme}

strided = LAYOUTS["strided"]
contiguous_format = MEMORY_FORMATS["contiguous_format"]
preserve_format = MEMORY_FORMATS["preserve_format"]
channels_last = MEMORY_FORMATS["channels_last"]
channels_last_3d = MEMORY_FORMATS["channels_last_3d"]


def torch_attributes() -> dict:
    """What _initExtension puts on the torch module."""
    out = dict(BY_NAME)
    out["legacy_contiguous_format"] = contiguous_format
    return out


TORCH_C = {"torch._C.layout": layout, "torch._C.memory_format": memory_format,
           "torch._C.qscheme": qscheme}
