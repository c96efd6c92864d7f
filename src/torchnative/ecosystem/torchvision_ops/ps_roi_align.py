"""torchvision::ps_roi_align (position-sensitive RoIAlign) and its backward.

Input channel ``(c_out * PH + ph) * PW + pw`` feeds output channel ``c_out`` at bin ``(ph, pw)``;
the roi is shifted by half a pixel and not forced to 1x1, and an empty grid divides by zero, as
torchvision's CPU kernel does.
"""

import torch

from torchnative.ecosystem.torchvision_ops import sampling
from torchnative.ecosystem.torchvision_ops.roi_align import chunks


def geometry(rois, spatial_scale, ph, pw, sampling_ratio):
    scale = torch.tensor(spatial_scale, dtype=rois.dtype)
    start_w = rois[:, 1] * scale - 0.5
    start_h = rois[:, 2] * scale - 0.5
    roi_w = (rois[:, 3] * scale - 0.5) - start_w
    roi_h = (rois[:, 4] * scale - 0.5) - start_h
    gh, gw = sampling.grid_sizes(roi_h, roi_w, ph, pw, sampling_ratio)
    return rois[:, 0].long(), start_h, start_w, roi_h / ph, roi_w / pw, gh, gw


def channel_map(k, c_out, ph, pw):
    return torch.arange(c_out * ph * pw, dtype=torch.int32).reshape(1, c_out, ph, pw).expand(k, -1, -1, -1)


def forward(input, rois, spatial_scale, pooled_height, pooled_width, sampling_ratio):
    torch._check(rois.dim() == 2 and rois.size(1) == 5, lambda: "Tensor rois should have shape as Tensor[K, 5]")
    torch._check(input.dtype == rois.dtype, lambda: "input should have the same type as rois")
    n, c, h, w = input.shape
    ph, pw = int(pooled_height), int(pooled_width)
    torch._check(c % (ph * pw) == 0,
                 lambda: "input channels must be a multiple of pooling height * pooling width")
    c_out = c // (ph * pw)
    k = rois.size(0)
    out = input.new_zeros((k, c_out, ph, pw))
    mapping = channel_map(k, c_out, ph, pw).contiguous()
    if out.numel() == 0:
        return out, mapping
    batch, sh, sw, bh, bw, gh, gw = geometry(rois.contiguous(), spatial_scale, ph, pw, sampling_ratio)
    # [N, PH, PW, H*W, C_out]: the plane each bin reads, channels of that bin only
    planes = input.reshape(n, c_out, ph, pw, h * w).permute(0, 2, 3, 4, 1)
    iph = torch.arange(ph)[None, :, None, None, None, None]
    ipw = torch.arange(pw)[None, None, None, :, None, None]
    for (grid_h, grid_w), members in sampling.roi_groups(gh, gw).items():
        for idx in chunks(members, ph * pw * max(grid_h * grid_w, 1) * 4 * c_out):
            if grid_h * grid_w == 0:
                out[idx] = torch.full_like(out[idx], float("nan"))  # 0 / 0 in the kernel
                continue
            ys = sampling.axis(sh[idx], bh[idx], ph, grid_h, h)
            xs = sampling.axis(sw[idx], bw[idx], pw, grid_w, w)
            pos, wt = sampling.corners(ys, xs, w)  # [r, ph, gh, pw, gw, 4]
            b = batch[idx][:, None, None, None, None, None]
            vals = planes[b, iph, ipw, pos]  # [r, ph, gh, pw, gw, 4, C_out]
            wv = wt[..., None] * vals
            sample = ((wv[..., 0, :] + wv[..., 1, :]) + wv[..., 2, :]) + wv[..., 3, :]
            pooled = sample.sum(dim=(2, 4)) / (grid_h * grid_w)  # [r, ph, pw, C_out]
            out[idx] = pooled.permute(0, 3, 1, 2)
    return out, mapping


def backward(grad, rois, channel_mapping, spatial_scale, pooled_height, pooled_width,
             sampling_ratio, batch_size, channels, height, width):
    torch._check(grad.dtype == rois.dtype, lambda: "grad should have the same type as rois")
    n, c, h, w = int(batch_size), int(channels), int(height), int(width)
    ph, pw = int(pooled_height), int(pooled_width)
    flat = grad.new_zeros(n * c * h * w)
    if grad.numel() == 0:
        return flat.reshape(n, c, h, w)
    batch, sh, sw, bh, bw, gh, gw = geometry(rois.contiguous(), spatial_scale, ph, pw, sampling_ratio)
    cmap = channel_mapping.long().permute(0, 2, 3, 1)  # [K, PH, PW, C_out]
    g = grad.permute(0, 2, 3, 1)
    c_out = grad.size(1)
    for (grid_h, grid_w), members in sampling.roi_groups(gh, gw).items():
        if grid_h * grid_w == 0:
            continue
        count = grid_h * grid_w
        for idx in chunks(members, ph * pw * count * 4 * c_out):
            ys = sampling.axis(sh[idx], bh[idx], ph, grid_h, h)
            xs = sampling.axis(sw[idx], bw[idx], pw, grid_w, w)
            pos, wt = sampling.corners(ys, xs, w)  # [r, ph, gh, pw, gw, 4]
            plane = (batch[idx][:, None, None, None] * c + cmap[idx]) * (h * w)  # [r, ph, pw, C_out]
            rows = plane[:, :, None, :, None, None, :] + pos[..., None]
            contrib = (g[idx][:, :, None, :, None, None, :] * wt[..., None]) / count
            flat.index_add_(0, rows.reshape(-1), contrib.reshape(-1))
    return flat.reshape(n, c, h, w)
