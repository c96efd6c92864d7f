"""torch.layout, torch.memory_format and torch.qscheme: named singletons upstream injects."""

from __future__ import annotations

from .typename import TP_NAMES


class _Named:
    __slots__ = ("_name",)  # not public: upstream's have no name attribute

    def __init__(self, name: str):
        self._name = name

    def __repr__(self):
        return f"torch.{self._name}"

    def __reduce__(self):
        return self._name


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
    TP_NAMES[_cls] = f"torch.{_cls.__name__}"

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


def channels_last_strides(sizes) -> tuple:
    """c10::get_channels_last_strides_2d/3d: the dense strides of the channels-last layout."""
    if len(sizes) == 4:
        n, c, h, w = sizes
        return (h * w * c, 1, w * c, c)
    n, c, d, h, w = sizes
    return (d * h * w * c, 1, h * w * c, w * c, c)


def is_channels_last_strides(sizes, strides) -> bool:
    """c10's is_channels_last_strides_2d/3d heuristic (TensorImpl::is_strides_like_channels_last):
    4-D or 5-D strides that order the channel dimension fastest. Ambiguous layouts (a size-1
    channel, N = 1 with C = 1 ...) answer False, so they stay contiguous."""
    if len(sizes) not in (4, 5) or strides[1] == 0:
        return False
    order = (1, 3, 2, 0) if len(sizes) == 4 else (1, 4, 3, 2, 0)
    low = 0
    for d in order:
        if sizes[d] == 0 or strides[d] < low:
            return False
        if d == 0 and low == strides[1]:
            return False
        low = strides[d] * (sizes[d] if sizes[d] > 1 else 1)
    return True


def suggest_memory_format(sizes, strides, exact_match: bool = False) -> memory_format:
    """TensorBase::suggest_memory_format: channels-last when the strides look like it (and, with
    ``exact_match``, are exactly its dense strides), else contiguous."""
    if is_channels_last_strides(sizes, strides) and (
            not exact_match or tuple(channels_last_strides(sizes)) == tuple(strides)):
        return channels_last if len(sizes) == 4 else channels_last_3d
    return contiguous_format
