"""torchvision::ps_roi_pool (position-sensitive average pooling) and its backward.

As in torchvision's CPU kernel, the forward clips windows to ``height - 1``/``width - 1`` and the
backward to ``height``/``width``, and the roi is not widened by one cell as RoIPool's is.
"""

import torch

from torchnative.ecosystem.torchvision_ops import windows
from torchnative.ecosystem.torchvision_ops.ps_roi_align import channel_map

CHUNK_ELEMENTS = 1 << 22


def geometry(rois, spatial_scale, ph, pw, h_limit, w_limit):
    scale = torch.tensor(spatial_scale, dtype=rois.dtype)
    r = windows.c_round(rois[:, 1:] * scale).long()
    start_w, start_h, end_w, end_h = r.unbind(1)
    roi_w = (end_w - start_w).clamp_min(1)
    roi_h = (end_h - start_h).clamp_min(1)
    h0, h1 = windows.bins(start_h, roi_h, ph, 0, h_limit, rois.dtype)
    w0, w1 = windows.bins(start_w, roi_w, pw, 0, w_limit, rois.dtype)
    return rois[:, 0].long(), h0, h1, w0, w1


def _area(h0, h1, w0, w1):
    """[K, PH, PW] window areas (zero where empty) as the kernel's T."""
    dh = (h1 - h0)[:, :, None]
    dw = (w1 - w0)[:, None, :]
    return dh, dw, (dh <= 0) | (dw <= 0)


def forward(input, rois, spatial_scale, pooled_height, pooled_width):
    torch._check(rois.dim() == 2 and rois.size(1) == 5, lambda: "Tensor rois should have shape as Tensor[K, 5]")
    torch._check(input.dtype == rois.dtype, lambda: "input and rois must have the same dtype")
    torch._check(input.dtype in (torch.float32, torch.float64),
                 lambda: "ps_roi_pool only supports float and double types")
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
    batch, h0, h1, w0, w1 = geometry(rois.contiguous(), spatial_scale, ph, pw, h - 1, w - 1)
    hs, hin = windows.cells(h0, h1)
    ws, win = windows.cells(w0, w1)
    lh, lw = hs.size(-1), ws.size(-1)
    dh, dw, empty = _area(h0, h1, w0, w1)
    planes = input.reshape(n, c_out, ph, pw, h * w).permute(0, 2, 3, 4, 1)
    iph = torch.arange(ph)[None, :, None, None, None]
    ipw = torch.arange(pw)[None, None, :, None, None]
    step = max(1, CHUNK_ELEMENTS // (ph * pw * lh * lw * c_out))
    for s in range(0, k, step):
        sl = slice(s, s + step)
        pos = (hs[sl][:, :, None, :, None].clamp(0, h - 1) * w
               + ws[sl][:, None, :, None, :].clamp(0, w - 1))
        inside = hin[sl][:, :, None, :, None] & win[sl][:, None, :, None, :]
        r = pos.size(0)
        pos = pos.reshape(r, ph, pw, lh * lw)
        vals = planes[batch[sl][:, None, None, None], iph[..., 0], ipw[..., 0], pos]  # [r,ph,pw,L,C_out]
        vals = vals * inside.reshape(r, ph, pw, lh * lw, 1).to(vals.dtype)
        area = (dh[sl] * dw[sl]).to(input.dtype)
        mean = vals.sum(3) / area[..., None]
        mean = torch.where(empty[sl][..., None], torch.zeros_like(mean), mean)
        out[sl] = mean.permute(0, 3, 1, 2)
    return out, mapping


def backward(grad, rois, channel_mapping, spatial_scale, pooled_height, pooled_width,
             batch_size, channels, height, width):
    torch._check(grad.dtype == rois.dtype, lambda: "grad and rois must have the same dtype")
    n, c, h, w = int(batch_size), int(channels), int(height), int(width)
    ph, pw = int(pooled_height), int(pooled_width)
    flat = grad.new_zeros(n * c * h * w)
    if grad.numel() == 0:
        return flat.reshape(n, c, h, w)
    batch, h0, h1, w0, w1 = geometry(rois.contiguous(), spatial_scale, ph, pw, h, w)
    hs, hin = windows.cells(h0, h1)
    ws, win = windows.cells(w0, w1)
    lh, lw = hs.size(-1), ws.size(-1)
    dh, dw, empty = _area(h0, h1, w0, w1)
    area = (dh * dw).to(grad.dtype)
    diff = grad.permute(0, 2, 3, 1) / area[..., None]  # [K, PH, PW, C_out]
    diff = torch.where(empty[..., None], torch.zeros_like(diff), diff)
    cmap = channel_mapping.long().permute(0, 2, 3, 1)
    pos = (hs[:, :, None, :, None].clamp(0, h - 1) * w + ws[:, None, :, None, :].clamp(0, w - 1))
    inside = hin[:, :, None, :, None] & win[:, None, :, None, :]  # [K, PH, PW, Lh, Lw]
    plane = (batch[:, None, None, None] * c + cmap) * (h * w)  # [K, PH, PW, C_out]
    rows = plane[:, :, :, None, None, :] + pos[..., None]
    vals = diff[:, :, :, None, None, :].expand_as(rows)
    keep = inside[..., None].expand_as(rows)
    flat.index_add_(0, rows[keep], vals[keep])
    return flat.reshape(n, c, h, w)
