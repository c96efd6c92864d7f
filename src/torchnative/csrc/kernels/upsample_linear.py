"""1-d linear and 3-d trilinear interpolation (float32, float64, float16, bfloat16) and their
backwards, as UpSampleKernel.cpp and UpSampleMoreKernel.cpp compute them: the N-d forms of the
bilinear kernel's loops (upsample_bilinear.py holds them, with the index and lambda rules).

Forward: linear1d always takes the generic loop; trilinear3d takes the channels-last loop for
channels-last-3d inputs with more than 3 channels (eight corners, weights the products
d * h * w), the generic loop otherwise. Backward: each output adds its corners' weighted
gradient in row-major order, channels-first or channels-last alike."""

from __future__ import annotations

from ..core.layouts import channels_last_3d
from ..ops.kernel_registry import kernel
from .support.nn_util import not_implemented
from .upsample_bilinear import _OPMATH, check_forward, linear_backward, linear_forward



def _forward(name: str, self, output_size, align_corners, scales):
    dims = len(scales)
    check_forward(dims, self, output_size)
    cl = dims == 3 and self.shape[1] > 3 and self.is_contiguous(memory_format=channels_last_3d)
    if self._dtype._name not in _OPMATH:
        raise not_implemented(f"{name}_channels_last" if cl else "compute_indices_weights_linear",
                              self._dtype)
    return linear_forward(self, [int(s) for s in output_size], align_corners, scales, cl)


@kernel("upsample_linear1d")
def upsample_linear1d(self, output_size, align_corners, scales=None):
    return _forward("upsample_linear1d", self, output_size, align_corners, (scales,))


@kernel("upsample_trilinear3d")
def upsample_trilinear3d(self, output_size, align_corners, scales_d=None, scales_h=None,
                         scales_w=None):
    return _forward("upsample_trilinear3d", self, output_size, align_corners,
                    (scales_d, scales_h, scales_w))


@kernel("upsample_linear1d_backward")
def upsample_linear1d_backward(grad_output, output_size, input_size, align_corners,
                               scales=None):
    return linear_backward("upsample_linear1d_backward", grad_output, output_size, input_size,
                           align_corners, (scales,))


@kernel("upsample_trilinear3d_backward")
def upsample_trilinear3d_backward(grad_output, output_size, input_size, align_corners,
                                  scales_d=None, scales_h=None, scales_w=None):
    return linear_backward("upsample_trilinear3d_backward", grad_output, output_size,
                           input_size, align_corners, (scales_d, scales_h, scales_w))
