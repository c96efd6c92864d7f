"""pixel_shuffle / pixel_unshuffle (PixelShuffle.cpp): the CPU kernels' shape checks, then the
pure data move -- (*, C*r*r, H, W) <-> (*, C, H*r, W*r) -- into an output of the input's suggested
memory format (a channels-last batch stays channels-last)."""

from __future__ import annotations

import numpy as np

from ..core.construct import empty
from ..core.layouts import channels_last_strides, suggest_memory_format, channels_last
from ..ops.kernel_registry import kernel
from .support.common import arr


def _check(name: str, self, factor: int, what: str) -> None:
    if self.dim() < 3:
        raise RuntimeError(f"{name} expects input to have at least 3 dimensions, but got input "
                           f"with {self.dim()} dimension(s)")
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def _result(self, values: np.ndarray):
    """A new tensor of ``values``, in the memory format upstream suggests for ``self``."""
    size = values.shape
    fmt = suggest_memory_format(self._size, self._stride)
    stride = tuple(channels_last_strides(size)) if fmt is channels_last and len(size) == 4 \
        else None
    out = empty(size, self._dtype, self.device, stride=stride)
    if out._np is not None and values.size:
        out._np[...] = values
    return out


@kernel("pixel_shuffle")
def pixel_shuffle(self, upscale_factor):
    r = upscale_factor
    _check("pixel_shuffle", self, r, "upscale_factor")
    c, h, w = self._size[-3:]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible "
                           f"by the square of upscale_factor, but input.size(-3)={c} is not "
                           f"divisible by {r * r}")
    batch = self._size[:-3]
    x = arr(self).reshape(*batch, c // (r * r), r, r, h, w)
    n = len(batch)
    order = (*range(n), n, n + 3, n + 1, n + 4, n + 2)  # (*, C, H, r, W, r)
    return _result(self, x.transpose(order).reshape(*batch, c // (r * r), h * r, w * r))


@kernel("pixel_unshuffle")
def pixel_unshuffle(self, downscale_factor):
    r = downscale_factor
    _check("pixel_unshuffle", self, r, "downscale_factor")
    c, h, w = self._size[-3:]
    if h % r:
        raise RuntimeError("pixel_unshuffle expects height to be divisible by downscale_factor, "
                           f"but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError("pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {r}")
    batch = self._size[:-3]
    x = arr(self).reshape(*batch, c, h // r, r, w // r, r)
    n = len(batch)
    order = (*range(n), n, n + 2, n + 4, n + 1, n + 3)  # (*, C, r, r, H, W)
    return _result(self, x.transpose(order).reshape(*batch, c * r * r, h // r, w // r))
