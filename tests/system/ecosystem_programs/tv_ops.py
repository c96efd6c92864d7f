"""torchvision.ops with in-process data: boxes, rois and feature maps from a seeded generator."""

import torch
from torchvision import ops


def boxes(n, size, dt, seed):
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g, dtype=torch.float64) * size
    wh = torch.rand(n, 2, generator=g, dtype=torch.float64) * size / 2 + 1
    return torch.cat([xy, xy + wh], 1).to(dt)


def feature(shape, dt, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(tuple(shape), generator=g, dtype=torch.float64).to(dt)


def rois(dt):
    b = boxes(12, 20.0, dt, 3)
    idx = torch.tensor([0, 1] * 6, dtype=dt)[:, None]
    return torch.cat([idx, b], 1)


def grad_of(fn, *inputs):
    leaves = [t.clone().requires_grad_() for t in inputs]
    out = fn(*leaves)
    w = feature(out.shape, out.dtype, 99)
    (out * w).sum().backward()
    return {"out": out, **{f"grad{i}": t.grad for i, t in enumerate(leaves)}}


def cases(dt):
    x = feature((2, 8, 16, 18), dt, 1)
    xp = feature((2, 12, 16, 18), dt, 2)
    r = rois(dt)
    b, s = boxes(200, 60.0, dt, 4), feature((200,), dt, 5)
    labels = torch.randint(0, 4, (200,), generator=torch.Generator().manual_seed(6))
    big_b, big_s = boxes(1200, 200.0, dt, 7), feature((1200,), dt, 8)
    big_l = torch.randint(0, 3, (1200,), generator=torch.Generator().manual_seed(9))
    dinp = feature((2, 4, 9, 10), dt, 10)
    dw = feature((6, 2, 3, 3), dt, 11)
    doff = feature((2, 2 * 2 * 9, 5, 5), dt, 12) * 1.5
    dmask = torch.sigmoid(feature((2, 2 * 9, 5, 5), dt, 13))
    dbias = feature((6,), dt, 14)

    def deform(i, w, o, m, bb):
        return ops.deform_conv2d(i, o, w, bb, stride=(2, 2), padding=(1, 1), mask=m)

    c = {
        "nms": lambda: {"keep": ops.nms(b, s, 0.5), "keep_03": ops.nms(b, s, 0.3)},
        # below 4000 coordinates: the offset trick; above: the per-class loop
        "batched_nms": lambda: {"small": ops.batched_nms(b, s, labels, 0.5),
                                "large": ops.batched_nms(big_b, big_s, big_l, 0.6)},
        "box_iou": lambda: {"iou": ops.box_iou(b[:50], b[50:120]),
                            "giou": ops.generalized_box_iou(b[:50], b[50:120]),
                            "diou": ops.distance_box_iou(b[:30], b[30:60]),
                            "area": ops.box_area(b)},
        "box_convert": lambda: {"cxcywh": ops.box_convert(b, "xyxy", "cxcywh"),
                                "xywh": ops.box_convert(b, "xyxy", "xywh"),
                                "clip": ops.clip_boxes_to_image(b, (40, 50)),
                                "small": ops.remove_small_boxes(b, 20.0)},
        "roi_align": lambda: {
            "aligned": ops.roi_align(x, r, (5, 4), 0.75, 2, True),
            "unaligned_adaptive": ops.roi_align(x, r, (3, 3), 0.5, -1, False),
            "boxes_list": ops.roi_align(x, [r[:5, 1:], r[5:, 1:]], 4, 0.6, 0, True)},
        "roi_pool": lambda: dict(zip(("out",), (ops.roi_pool(x, r, (4, 3), 0.7),))),
        "ps_roi_align": lambda: {"out": ops.ps_roi_align(xp, r, (2, 3), 0.7, 2)},
        "ps_roi_pool": lambda: {"out": ops.ps_roi_pool(xp, r, (2, 3), 0.7)},
        "deform_conv2d": lambda: {"v2": deform(dinp, dw, doff, dmask, dbias),
                                  "v1": ops.deform_conv2d(dinp, doff, dw, dbias, stride=2, padding=1)},
        "multiscale_roi_align": lambda: {"out": ops.MultiScaleRoIAlign(["a", "b"], 3, 2)(
            {"a": x, "b": feature((2, 8, 8, 9), dt, 15)},
            [r[:6, 1:] * 2, r[6:, 1:] * 2], [(32, 36), (32, 36)])},
        "sigmoid_focal_loss": lambda: grad_of(
            lambda lg: ops.sigmoid_focal_loss(lg, (feature((40, 5), dt, 16) > 0.5).to(dt), reduction="sum"),
            feature((40, 5), dt, 17)),
        "grad_roi_align": lambda: grad_of(lambda t: ops.roi_align(t, r, (3, 4), 0.75, 2, True), x),
        "grad_roi_pool": lambda: grad_of(lambda t: ops.roi_pool(t, r, (3, 4), 0.75), x),
        "grad_ps_roi_align": lambda: grad_of(lambda t: ops.ps_roi_align(t, r, (2, 3), 0.7, 2), xp),
        "grad_ps_roi_pool": lambda: grad_of(lambda t: ops.ps_roi_pool(t, r, (2, 3), 0.7), xp),
        "grad_deform_conv2d": lambda: grad_of(deform, dinp, dw, doff, dmask, dbias),
    }
    return c
