"""torchvision::nms: greedy non-maximum suppression, as torchvision's CPU kernel does it."""

import torch


def _check(dets, scores):
    torch._check(dets.dim() == 2, lambda: f"boxes should be a 2d tensor, got {dets.dim()}D")
    torch._check(dets.size(1) == 4,
                 lambda: f"boxes should have 4 elements in dimension 1, got {dets.size(1)}")
    torch._check(scores.dim() == 1, lambda: f"scores should be a 1d tensor, got {scores.dim()}D")
    torch._check(dets.size(0) == scores.size(0),
                 lambda: "boxes and scores should have same number of elements in dimension 0, "
                         f"got {dets.size(0)} and {scores.size(0)}")
    torch._check(dets.dtype == scores.dtype, lambda: "dets should have the same type as scores")
    torch._check(dets.is_floating_point(), lambda: f'"nms_kernel" not implemented for {dets.dtype}')


def nms(dets, scores, iou_threshold):
    _check(dets, scores)
    if dets.numel() == 0:
        return torch.empty(0, dtype=torch.long)
    x1, y1, x2, y2 = (dets[:, i].contiguous() for i in range(4))
    areas = (x2 - x1) * (y2 - y1)
    order = torch.sort(scores, dim=0, descending=True, stable=True).indices
    # The IoU of every pair, computed in the kernel's order and dtype: the greedy pass below then
    # only reads it. Kept rows suppress later ones whose IoU exceeds the threshold.
    xx1 = torch.maximum(x1[:, None], x1[None, :])
    yy1 = torch.maximum(y1[:, None], y1[None, :])
    xx2 = torch.minimum(x2[:, None], x2[None, :])
    yy2 = torch.minimum(y2[:, None], y2[None, :])
    zero = torch.zeros((), dtype=dets.dtype)
    inter = torch.maximum(zero, xx2 - xx1) * torch.maximum(zero, yy2 - yy1)
    iou = inter / (areas[:, None] + areas[None, :] - inter)
    over = iou.double() > iou_threshold  # the C++ compares the float IoU with the double threshold
    keep, suppressed = [], [False] * dets.size(0)
    for i in order.tolist():
        if suppressed[i]:
            continue
        keep.append(i)
        for j in over[i].nonzero().flatten().tolist():
            suppressed[j] = True
    return torch.tensor(keep, dtype=torch.long)
