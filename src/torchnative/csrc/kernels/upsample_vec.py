"""``upsample_linear1d.vec`` and ``upsample_trilinear3d.vec``: the output-size/scale-factor
overloads of linear and trilinear interpolation (``F.interpolate(mode="linear"/"trilinear")``).
Upstream's C++ composites resolve the size and call the kernel; its Python decomposition either
is registered only on the Python dispatcher (``py_impl``), which the C++ dispatcher never
consults, or (trilinear) computes in Python instead of calling the kernel, so these composites
are ours. The other ``.vec`` overloads are served elsewhere (upsample_uint8.py) or by
upstream's registered decompositions."""

from __future__ import annotations

from ..dispatch.call import call
from ..ops.kernel_registry import kernel


def _check_failed(what: str) -> str:
    """TORCH_CHECK's text for a condition given without a message."""
    return (f"Expected static_cast<int64_t>({what}) == spatial_dimensions to be true, but got "
            "false.  (Could this error message be improved?  If so, please report an enhancement "
            "request to PyTorch.)")


def _output_size(input_size, output_size, scale_factors) -> list[int]:
    """UpSample.h's compute_output_size, each size converted to int64 as c10::checked_convert
    does (a NaN or a value past 2^63 refused; 2^63 itself wraps to INT64_MIN) and then made a
    SymInt (which holds nothing below -2^62)."""
    spatial = len(input_size) - 2
    if output_size is not None:
        if scale_factors is not None:
            raise RuntimeError("Must specify exactly one of output_size and scale_factors")
        if len(output_size) != spatial:
            raise RuntimeError(_check_failed("output_size->size()"))
        osize = list(output_size)
    elif scale_factors is not None:
        if len(scale_factors) != spatial:
            raise RuntimeError(_check_failed("scale_factors->size()"))
        try:
            osize = [int(input_size[i + 2] * s) for i, s in enumerate(scale_factors)]
        except (ValueError, OverflowError):  # int() of a NaN or an infinity
            osize = [2 ** 64]
    else:
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    osize = [n if n != 2 ** 63 else -2 ** 63 for n in osize]
    if any(not -2 ** 63 <= n < 2 ** 63 for n in osize):
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    for n in osize:
        if n < -2 ** 62:
            raise RuntimeError(f"IntArrayRef contains an int that cannot be represented as a "
                               f"SymInt: {n}")
    return osize


@kernel("upsample_linear1d.vec", composite=True)
def upsample_linear1d_vec(input, output_size, align_corners, scale_factors):
    osize = _output_size(tuple(input.shape), output_size, scale_factors)
    scale_w = scale_factors[0] if scale_factors is not None else None
    return call("upsample_linear1d", input, osize, align_corners, scale_w)


@kernel("upsample_trilinear3d.vec", composite=True)
def upsample_trilinear3d_vec(input, output_size, align_corners, scale_factors):
    osize = _output_size(tuple(input.shape), output_size, scale_factors)
    scales = scale_factors if scale_factors is not None else (None, None, None)
    return call("upsample_trilinear3d", input, osize, align_corners, *scales)
