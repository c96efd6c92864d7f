"""Integer pooling windows of torchvision's RoIPool-family CPU kernels.

Roi corners are rounded half away from zero (C's ``round``), each bin spans
``[floor(p * bin), ceil((p + 1) * bin))`` cells from the roi's start, clipped to the image.
Windows differ in size, so they are laid on a padded grid of the largest one with a mask.
"""

import torch


def c_round(x):
    """C's round(): halves away from zero (torch.round goes to even). Exact: x - trunc(x) is."""
    t = torch.trunc(x)
    return t + torch.where((x - t).abs() >= 0.5, torch.sign(x), torch.zeros_like(x))


def bins(start, size, pooled, limit_low, limit_high, dtype):
    """[R, pooled] window starts and ends along one axis (``start``/``size`` integer [R])."""
    bin_size = size.to(dtype) / pooled
    p = torch.arange(pooled, dtype=dtype)
    lo = torch.floor(p[None, :] * bin_size[:, None]).long() + start[:, None]
    hi = torch.ceil((p[None, :] + 1) * bin_size[:, None]).long() + start[:, None]
    return lo.clamp(limit_low, limit_high), hi.clamp(limit_low, limit_high)


def cells(lo, hi):
    """Padded cell coordinates [R, P, L] along one axis and whether each is inside its window."""
    span = int((hi - lo).max().clamp_min(0)) if lo.numel() else 0
    span = max(span, 1)
    k = torch.arange(span)
    coord = lo[..., None] + k
    return coord, coord < hi[..., None]
