"""The bilinear sampling grid of torchvision's RoIAlign-family CPU kernels.

Each output bin averages ``grid_h x grid_w`` bilinear samples; a sample reads four pixels with
weights ``hy*hx, hy*lx, ly*hx, ly*lx``. A sample outside ``[-1, height] x [-1, width]`` (or NaN)
reads nothing; one inside is clamped to the border first. The kernels index one image plane, so
the corners are returned as flat ``y * width + x`` positions.
"""

import torch


def grid_sizes(roi_h, roi_w, pooled_h, pooled_w, sampling_ratio):
    """Samples per bin along each axis: the ratio, or ceil(roi size / pooled size) adaptively."""
    if sampling_ratio > 0:
        n = torch.full_like(roi_h, sampling_ratio, dtype=torch.long)
        return n, n.clone()
    return torch.ceil(roi_h / pooled_h).long(), torch.ceil(roi_w / pooled_w).long()


def axis(start, bin_size, pooled, grid, size):
    """Sample coordinates along one axis for rois sharing one ``grid``: ``start``/``bin_size``
    are [R]; returns (low, high, weight_low, weight_high, inside), each [R, pooled, grid]."""
    p = torch.arange(pooled, dtype=start.dtype)
    g = torch.arange(grid, dtype=start.dtype) + 0.5
    # the kernel's order of operations: (start + p * bin) + ((g + .5) * bin) / grid
    head = start[:, None] + p[None, :] * bin_size[:, None]
    tail = (g[None, :] * bin_size[:, None]) / grid
    c = head[:, :, None] + tail[:, None, :]
    inside = (c >= -1.0) & (c <= size)
    c = torch.where(inside, c, torch.zeros_like(c)).clamp_min(0)
    low = c.long()
    at_edge = low >= size - 1
    low = torch.where(at_edge, torch.full_like(low, size - 1), low)
    high = torch.where(at_edge, low, low + 1)
    c = torch.where(at_edge, low.to(c.dtype), c)
    frac = c - low.to(c.dtype)
    return low, high, 1.0 - frac, frac, inside


def corners(ys, xs, width):
    """Combine the two axes into [R, PH, gh, PW, gw, 4] flat positions and weights (zero where
    the sample falls outside)."""
    ylo, yhi, wylo, wyhi, yin = (t[:, :, :, None, None] for t in ys)
    xlo, xhi, wxlo, wxhi, xin = (t[:, None, None, :, :] for t in xs)
    inside = (yin & xin).to(wylo.dtype)
    pos = torch.stack([ylo * width + xlo, ylo * width + xhi, yhi * width + xlo, yhi * width + xhi], -1)
    w = torch.stack([wylo * wxlo, wylo * wxhi, wyhi * wxlo, wyhi * wxhi], -1) * inside[..., None]
    return pos, w


def roi_groups(grid_h, grid_w):
    """Roi indices grouped by their (grid_h, grid_w), so each group samples one regular grid."""
    groups = {}
    for i, key in enumerate(zip(grid_h.tolist(), grid_w.tolist())):
        groups.setdefault(key, []).append(i)
    return {k: torch.tensor(v, dtype=torch.long) for k, v in groups.items()}
