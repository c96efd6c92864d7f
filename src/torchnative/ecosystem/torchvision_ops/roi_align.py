"""torchvision::roi_align and its backward, following torchvision's CPU kernel."""

import torch

from torchnative.ecosystem.torchvision_ops import sampling

# Samples gathered per chunk (rois x bins x samples x channels), bounding the working memory.
CHUNK_ELEMENTS = 1 << 22


def _check(input, rois):
    torch._check(rois.dim() == 2 and rois.size(1) == 5, lambda: "rois must have shape as Tensor[K, 5]")
    torch._check(input.dtype == rois.dtype, lambda: "input should have the same type as rois")


def geometry(rois, spatial_scale, pooled_h, pooled_w, sampling_ratio, aligned):
    """Per roi: batch index, start, bin size and samples per bin along each axis."""
    scale = torch.tensor(spatial_scale, dtype=rois.dtype)  # the kernel holds it as T
    offset = 0.5 if aligned else 0.0
    start_w = rois[:, 1] * scale - offset
    start_h = rois[:, 2] * scale - offset
    roi_w = (rois[:, 3] * scale - offset) - start_w
    roi_h = (rois[:, 4] * scale - offset) - start_h
    if not aligned:  # malformed rois are forced to 1x1
        roi_w = roi_w.clamp_min(1.0)
        roi_h = roi_h.clamp_min(1.0)
    bin_h = roi_h / pooled_h
    bin_w = roi_w / pooled_w
    grid_h, grid_w = sampling.grid_sizes(roi_h, roi_w, pooled_h, pooled_w, sampling_ratio)
    return rois[:, 0].long(), start_h, start_w, bin_h, bin_w, grid_h, grid_w


def chunks(index, per_roi):
    step = max(1, CHUNK_ELEMENTS // max(1, per_roi))
    return [index[i:i + step] for i in range(0, index.numel(), step)]


def forward(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio, aligned):
    _check(input, rois)
    n, c, h, w = input.shape
    ph, pw = int(pooled_height), int(pooled_width)
    out = input.new_zeros((rois.size(0), c, ph, pw))
    if out.numel() == 0:
        return out
    rois = rois.contiguous()
    batch, sh, sw, bh, bw, gh, gw = geometry(rois, spatial_scale, ph, pw, sampling_ratio, aligned)
    planes = input.permute(0, 2, 3, 1).reshape(n, h * w, c)  # [N, H*W, C]: one gather per sample
    for (grid_h, grid_w), members in sampling.roi_groups(gh, gw).items():
        if grid_h * grid_w == 0:
            continue  # an empty grid averages nothing: the output stays zero
        for idx in chunks(members, ph * pw * grid_h * grid_w * 4 * c):
            ys = sampling.axis(sh[idx], bh[idx], ph, grid_h, h)
            xs = sampling.axis(sw[idx], bw[idx], pw, grid_w, w)
            pos, wt = sampling.corners(ys, xs, w)  # [r, ph, gh, pw, gw, 4]
            vals = planes[batch[idx][:, None, None, None, None, None], pos]  # [..., 4, C]
            wv = wt[..., None] * vals
            sample = ((wv[..., 0, :] + wv[..., 1, :]) + wv[..., 2, :]) + wv[..., 3, :]
            pooled = sample.sum(dim=(2, 4)) / (grid_h * grid_w)  # [r, ph, pw, C]
            out[idx] = pooled.permute(0, 3, 1, 2).to(out.dtype)
    return out


def backward(grad, rois, spatial_scale, pooled_height, pooled_width, batch_size, channels,
             height, width, sampling_ratio, aligned):
    torch._check(grad.dtype == rois.dtype, lambda: "grad should have the same type as rois")
    n, c, h, w = int(batch_size), int(channels), int(height), int(width)
    ph, pw = int(pooled_height), int(pooled_width)
    flat = grad.new_zeros((n * h * w, c))  # [N*H*W, C], rows indexed by batch * H*W + position
    if grad.numel() == 0:
        return flat.reshape(n, h, w, c).permute(0, 3, 1, 2).contiguous()
    rois = rois.contiguous()
    batch, sh, sw, bh, bw, gh, gw = geometry(rois, spatial_scale, ph, pw, sampling_ratio, aligned)
    g = grad.permute(0, 2, 3, 1)  # [K, PH, PW, C]
    for (grid_h, grid_w), members in sampling.roi_groups(gh, gw).items():
        if grid_h * grid_w == 0:
            continue
        count = grid_h * grid_w
        for idx in chunks(members, ph * pw * grid_h * grid_w * 4 * c):
            ys = sampling.axis(sh[idx], bh[idx], ph, grid_h, h)
            xs = sampling.axis(sw[idx], bw[idx], pw, grid_w, w)
            pos, wt = sampling.corners(ys, xs, w)
            rows = batch[idx][:, None, None, None, None, None] * (h * w) + pos
            gb = g[idx][:, :, None, :, None, None, :]  # [r, ph, 1, pw, 1, 1, C]
            contrib = (gb * wt[..., None]) / count
            flat.index_add_(0, rows.reshape(-1), contrib.reshape(-1, c))
    return flat.reshape(n, h, w, c).permute(0, 3, 1, 2).contiguous()
