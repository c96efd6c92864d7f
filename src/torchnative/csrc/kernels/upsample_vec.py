"""``upsample_linear1d.vec``: the output-size/scale-factor overload of 1-d linear interpolation
(``F.interpolate(mode="linear")``). Upstream's C++ composite resolves the size and calls
``upsample_linear1d``; its Python decomposition is registered only on the Python dispatcher
(``py_impl``), which the C++ dispatcher never consults, so this composite is ours. The other
``.vec`` overloads are served by upstream's registered decompositions."""

from __future__ import annotations

from ..dispatch.call import call
from ..ops.kernel_registry import kernel


def _check_failed(what: str) -> str:
    """TORCH_CHECK's text for a condition given without a message."""
    return (f"Expected static_cast<int64_t>({what}) == spatial_dimensions to be true, but got "
            "false.  (Could this error message be improved?  If so, please report an enhancement "
            "request to PyTorch.)")


def _output_size(input_size, output_size, scale_factors) -> list[int]:
    """UpSample.h's compute_output_size."""
    spatial = len(input_size) - 2
    if output_size is not None:
        if scale_factors is not None:
            raise RuntimeError("Must specify exactly one of output_size and scale_factors")
        if len(output_size) != spatial:
            raise RuntimeError(_check_failed("output_size->size()"))
        return list(output_size)
    if scale_factors is not None:
        if len(scale_factors) != spatial:
            raise RuntimeError(_check_failed("scale_factors->size()"))
        return [int(input_size[i + 2] * s) for i, s in enumerate(scale_factors)]
    raise RuntimeError("Must specify exactly one of output_size and scale_factors")


@kernel("upsample_linear1d.vec", composite=True)
def upsample_linear1d_vec(input, output_size, align_corners, scale_factors):
    osize = _output_size(tuple(input.shape), output_size, scale_factors)
    scale_w = scale_factors[0] if scale_factors is not None else None
    return call("upsample_linear1d", input, osize, align_corners, scale_w)
