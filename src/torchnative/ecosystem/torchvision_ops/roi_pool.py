"""torchvision::roi_pool (max over integer windows, with argmax) and its backward."""

import torch

from torchnative.ecosystem.torchvision_ops import windows

CHUNK_ELEMENTS = 1 << 22


def _check(input, rois):
    torch._check(rois.dim() == 2 and rois.size(1) == 5, lambda: "Tensor rois should have shape as Tensor[K, 5]")
    torch._check(input.dtype == rois.dtype, lambda: "input and rois must have the same dtype")
    torch._check(input.dtype in (torch.float32, torch.float64),
                 lambda: "roi_pool only supports float and double types")


def geometry(rois, spatial_scale, ph, pw, h, w):
    scale = torch.tensor(spatial_scale, dtype=rois.dtype)
    r = windows.c_round(rois[:, 1:] * scale).long()
    start_w, start_h, end_w, end_h = r.unbind(1)
    roi_w = (end_w - start_w + 1).clamp_min(1)
    roi_h = (end_h - start_h + 1).clamp_min(1)
    h0, h1 = windows.bins(start_h, roi_h, ph, 0, h, rois.dtype)
    w0, w1 = windows.bins(start_w, roi_w, pw, 0, w, rois.dtype)
    return rois[:, 0].long(), h0, h1, w0, w1


def forward(input, rois, spatial_scale, pooled_height, pooled_width):
    _check(input, rois)
    n, c, h, w = input.shape
    ph, pw = int(pooled_height), int(pooled_width)
    k = rois.size(0)
    out = input.new_zeros((k, c, ph, pw))
    argmax = torch.zeros((k, c, ph, pw), dtype=torch.int32)
    if out.numel() == 0:
        return out, argmax
    batch, h0, h1, w0, w1 = geometry(rois.contiguous(), spatial_scale, ph, pw, h, w)
    hs, hin = windows.cells(h0, h1)  # [K, PH, Lh]
    ws, win = windows.cells(w0, w1)  # [K, PW, Lw]
    lh, lw = hs.size(-1), ws.size(-1)
    planes = input.permute(0, 2, 3, 1).reshape(n, h * w, c)
    step = max(1, CHUNK_ELEMENTS // (ph * pw * lh * lw * c))
    for s in range(0, k, step):
        sl = slice(s, s + step)
        # [r, PH, PW, Lh, Lw] positions (row-major within the window: the kernel's scan order)
        pos = (hs[sl][:, :, None, :, None].clamp(0, h - 1) * w
               + ws[sl][:, None, :, None, :].clamp(0, w - 1))
        inside = hin[sl][:, :, None, :, None] & win[sl][:, None, :, None, :]
        vals = planes[batch[sl][:, None, None, None, None], pos]  # [r, PH, PW, Lh, Lw, C]
        # the kernel starts from -FLT_MAX and takes the first strictly greater value
        floor = torch.tensor(torch.finfo(torch.float32).min, dtype=input.dtype)
        vals = torch.where(inside[..., None], vals, floor)
        r = vals.size(0)
        vals = vals.reshape(r, ph, pw, lh * lw, c)
        best, where = vals.max(dim=3)  # first maximum
        empty = ~inside.reshape(r, ph, pw, lh * lw).any(-1)
        hit = best > floor
        where_pos = torch.gather(pos.reshape(r, ph, pw, lh * lw), 3, where)
        idx = torch.where(hit, where_pos, torch.full_like(where_pos, -1))
        best = torch.where(empty[..., None], torch.zeros_like(best), best)
        out[sl] = best.permute(0, 3, 1, 2)
        argmax[sl] = idx.permute(0, 3, 1, 2).to(torch.int32)
    return out, argmax


def backward(grad, rois, argmax, spatial_scale, pooled_height, pooled_width, batch_size,
             channels, height, width):
    torch._check(rois.dim() == 2 and rois.size(1) == 5, lambda: "Tensor rois should have shape as Tensor[K, 5]")
    torch._check(grad.dtype == rois.dtype, lambda: "grad and rois must have the same dtype")
    n, c, h, w = int(batch_size), int(channels), int(height), int(width)
    flat = grad.new_zeros(n * c * h * w)
    if grad.numel() == 0:
        return flat.reshape(n, c, h, w)
    batch = rois[:, 0].long()
    am = argmax.long()
    plane = (batch[:, None, None, None] * c + torch.arange(c)[None, :, None, None]) * (h * w)
    keep = am >= 0
    flat.index_add_(0, (plane + am)[keep], grad.expand_as(am)[keep].to(flat.dtype))
    return flat.reshape(n, c, h, w)
