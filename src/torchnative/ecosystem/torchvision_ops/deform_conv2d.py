"""torchvision::deform_conv2d (deformable convolution v1/v2) and its backward.

The kernel samples the input at ``(oy * stride - pad + i * dilation + dy, ...)`` for every kernel
tap ``(i, j)``, with the tap's learned offset ``(dy, dx)``, bilinearly (outside pixels read zero,
points at or beyond one pixel outside read nothing), scales by the mask (v2), and multiplies the
sampled columns by the weight as a grouped matrix product. Layouts follow torchvision's: offset
``[B, offset_groups * 2 * kh * kw, oh, ow]`` with (dy, dx) pairs per tap, mask
``[B, offset_groups * kh * kw, oh, ow]``.
"""

import torch

CHUNK_ELEMENTS = 1 << 23


def _shapes(input, weight, offset, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w):
    b, c, h, w = input.shape
    kh, kw = weight.shape[2], weight.shape[3]
    oh = (h + 2 * pad_h - (dil_h * (kh - 1) + 1)) // stride_h + 1
    ow = (w + 2 * pad_w - (dil_w * (kw - 1) + 1)) // stride_w + 1
    return b, c, h, w, kh, kw, oh, ow


def _check(input, weight, offset, mask, bias, sh, sw, ph, pw, dh, dw, groups, offset_groups, use_mask):
    b, c, h, w, kh, kw, oh, ow = _shapes(input, weight, offset, sh, sw, ph, pw, dh, dw)
    torch._check(input.dim() == 4, lambda: "input must be a 4D tensor")
    torch._check(offset.dim() == 4, lambda: "offset must be a 4D tensor")
    torch._check(not use_mask or mask.dim() == 4, lambda: "mask must be a 4D tensor")
    torch._check(weight.dim() == 4, lambda: "weight must be a 4D tensor")
    torch._check(kh > 0 and kw > 0, lambda: f"weight_h: {kh} weight_w: {kw}")
    torch._check(sh > 0 and sw > 0, lambda: f"stride_h: {sh} stride_w: {sw}")
    torch._check(ph >= 0 and pw >= 0, lambda: f"pad_h: {ph} pad_w: {pw}")
    torch._check(dh > 0 and dw > 0, lambda: f"dilation_h: {dh} dilation_w: {dw}")
    torch._check(weight.size(1) * groups == c, lambda: "Input channels must be divisible by groups")
    torch._check(weight.size(0) % groups == 0, lambda: "Output channels must be divisible by groups")
    torch._check(offset.size(1) == offset_groups * 2 * kh * kw,
                 lambda: f"offset.shape[1] is not valid: got: {offset.size(1)} "
                         f"expected: {offset_groups * 2 * kh * kw}")
    torch._check(not use_mask or mask.size(1) == offset_groups * kh * kw,
                 lambda: f"mask.shape[1] is not valid: got: {mask.size(1)} "
                         f"expected: {offset_groups * kh * kw}")
    torch._check(c % offset_groups == 0, lambda: "Input channels must be divisible by offset_groups")
    torch._check(offset.size(0) == b, lambda: "invalid batch size of offset")
    torch._check(offset.size(2) == oh and offset.size(3) == ow,
                 lambda: f"offset output dims: ({offset.size(2)}, {offset.size(3)}) - "
                         f"computed output dims: ({oh}, {ow})")
    torch._check(oh > 0 and ow > 0, lambda: f"Calculated output size too small - out_h: {oh} out_w: {ow}")


def _points(offset, kh, kw, oh, ow, og, sh, sw, ph, pw, dh, dw):
    """Sample coordinates y, x: [B, G, K, oh, ow] with K = kh * kw taps."""
    b = offset.size(0)
    off = offset.reshape(b, og, kh * kw, 2, oh, ow)
    dt = offset.dtype
    i = torch.arange(kh).repeat_interleave(kw).to(dt)  # tap row, tap-major as the offset layout
    j = torch.arange(kw).repeat(kh).to(dt)
    base_y = (torch.arange(oh, dtype=dt) * sh - ph)[None, :, None] + (i * dh)[:, None, None]
    base_x = (torch.arange(ow, dtype=dt) * sw - pw)[None, None, :] + (j * dw)[:, None, None]
    return base_y + off[:, :, :, 0], base_x + off[:, :, :, 1]


def _corners(y, x, h, w):
    """Four corners of each sample: flat positions, bilinear weights, validity of each corner,
    and whether the sample reads anything (the kernel's cut at one pixel outside)."""
    reads = (y > -1) & (y < h) & (x > -1) & (x < w)
    y0f, x0f = torch.floor(y), torch.floor(x)
    ly, lx = y - y0f, x - x0f
    hy, hx = 1 - ly, 1 - lx
    y0, x0 = y0f.long(), x0f.long()
    y1, x1 = y0 + 1, x0 + 1
    ys = (y0, y0, y1, y1)
    xs = (x0, x1, x0, x1)
    wts = (hy * hx, hy * lx, ly * hx, ly * lx)
    out = []
    for yy, xx, wt in zip(ys, xs, wts):
        valid = (yy >= 0) & (yy <= h - 1) & (xx >= 0) & (xx <= w - 1)
        pos = yy.clamp(0, h - 1) * w + xx.clamp(0, w - 1)
        out.append((pos, wt, valid))
    return out, reads, (y0, x0, ly, lx)


def _gather(planes, pos):
    """planes [B, G, Cg, H*W], pos [B, G, K, oh, ow] -> [B, G, Cg, K, oh, ow]."""
    b, g, cg, _ = planes.shape
    idx = pos.reshape(b, g, 1, -1).expand(b, g, cg, -1)
    return torch.gather(planes, 3, idx).reshape(b, g, cg, *pos.shape[2:])


def _columns(input, offset, mask, kh, kw, oh, ow, og, use_mask, geo):
    """The sampled (and masked) columns [B, C, K, oh, ow]."""
    b, c, h, w = input.shape
    y, x = _points(offset, kh, kw, oh, ow, og, *geo)
    planes = input.reshape(b, og, c // og, h * w)
    corners, reads, _ = _corners(y, x, h, w)
    val = None
    for pos, wt, valid in corners:
        v = _gather(planes, pos) * valid[:, :, None].to(input.dtype)
        term = wt[:, :, None] * v
        val = term if val is None else val + term
    val = val * reads[:, :, None].to(input.dtype)
    if use_mask:
        val = mask.reshape(b, og, 1, kh * kw, oh, ow) * val
    return val.reshape(b, c, kh * kw, oh, ow)


def forward(input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w, dilation_h,
            dilation_w, groups, offset_groups, use_mask):
    geo = (stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w)
    _check(input, weight, offset, mask, bias, *geo, groups, offset_groups, use_mask)
    b, c, h, w, kh, kw, oh, ow = _shapes(input, weight, offset, *geo)
    oc = weight.size(0)
    cols = _columns(input.contiguous(), offset.contiguous(), mask.contiguous(), kh, kw, oh, ow,
                    offset_groups, use_mask, geo)
    cols = cols.reshape(b, groups, (c // groups) * kh * kw, oh * ow)
    wg = weight.reshape(groups, oc // groups, (c // groups) * kh * kw)
    out = torch.matmul(wg[None], cols).reshape(b, oc, oh, ow)
    return out + bias.reshape(1, oc, 1, 1)


def backward(grad, input, weight, offset, mask, bias, stride_h, stride_w, pad_h, pad_w,
             dilation_h, dilation_w, groups, offset_groups, use_mask):
    geo = (stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w)
    b, c, h, w, kh, kw, oh, ow = _shapes(input, weight, offset, *geo)
    oc, og, k = weight.size(0), offset_groups, kh * kw
    input, offset, mask = input.contiguous(), offset.contiguous(), mask.contiguous()
    gout = grad.reshape(b, groups, oc // groups, oh * ow)
    wg = weight.reshape(groups, oc // groups, (c // groups) * k)
    # d loss / d columns, then through the sampling to input, offset and mask
    gcols = torch.matmul(wg.transpose(1, 2)[None], gout).reshape(b, og, c // og, k, oh, ow)
    cols = _columns(input, offset, mask, kh, kw, oh, ow, og, use_mask, geo)
    grad_weight = torch.matmul(gout, cols.reshape(b, groups, (c // groups) * k, oh * ow)
                               .transpose(2, 3)).sum(0).reshape(weight.shape)
    grad_bias = grad.sum(dim=(0, 2, 3))

    y, x = _points(offset, kh, kw, oh, ow, og, *geo)
    corners, reads, (y0, x0, ly, lx) = _corners(y, x, h, w)
    planes = input.reshape(b, og, c // og, h * w)
    m = mask.reshape(b, og, 1, k, oh, ow) if use_mask else torch.ones((), dtype=input.dtype)
    gm = gcols * m  # [B, G, Cg, K, oh, ow]
    # input: scatter each column gradient to the four corners it read
    grad_input = input.new_zeros((b, og, c // og, h * w))
    for pos, wt, valid in corners:
        contrib = gm * (wt * valid.to(wt.dtype))[:, :, None]
        idx = pos[:, :, None].expand_as(contrib).reshape(b, og, c // og, -1)
        grad_input.scatter_add_(3, idx, contrib.reshape(b, og, c // og, -1))
    # offset: the derivative of the bilinear weights along y and x (corners outside read zero)
    v = [_gather(planes, pos) * valid[:, :, None].to(input.dtype) for pos, _, valid in corners]
    lx_, ly_ = lx[:, :, None], ly[:, :, None]
    d_y = lx_ * (v[3] - v[1]) + (1 - lx_) * (v[2] - v[0])
    d_x = ly_ * (v[3] - v[2]) + (1 - ly_) * (v[1] - v[0])
    grad_dy = (gm * d_y).sum(2)  # [B, G, K, oh, ow]
    grad_dx = (gm * d_x).sum(2)
    grad_offset = torch.stack([grad_dy, grad_dx], 3).reshape(offset.shape)
    if use_mask:
        sampled = None
        for (pos, wt, valid), vv in zip(corners, v):
            term = wt[:, :, None] * vv
            sampled = term if sampled is None else sampled + term
        sampled = sampled * reads[:, :, None].to(input.dtype)
        grad_mask = (gcols * sampled).sum(2).reshape(mask.shape)
    else:
        grad_mask = torch.zeros_like(mask)
    return (grad_input.reshape(b, c, h, w), grad_weight, grad_offset, grad_mask, grad_bias)
