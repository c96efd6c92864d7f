"""grid_sampler as upstream's C++ composite (GridSampler.cpp) writes it: the 2-D or 3-D sampler by
the input's rank (cuDNN's branch never applies on the CPU). torchvision's rotate and affine
transforms reach it through ``F.grid_sample``."""

from __future__ import annotations

from ..dispatch.call import call
from ..ops.kernel_registry import kernel


@kernel("grid_sampler", composite=True)
def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    name = "grid_sampler_2d" if input.dim() == 4 else "grid_sampler_3d"
    return call(name, input, grid, interpolation_mode, padding_mode, align_corners)
