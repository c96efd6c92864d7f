"""Small seeded image augmentations on tensors (N, C, H, W), drawn from torch's generator so that
ours and upstream draw the same ones: brightness/contrast jitter, a shift of up to one pixel,
and Gaussian noise (the kinds CoTTA's and MEMO's augmentation lists use, sized for 8×8)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def shift(x: torch.Tensor, dy: int, dx: int) -> torch.Tensor:
    p = F.pad(x, (1, 1, 1, 1), mode="replicate")
    h, w = x.shape[-2:]
    return p[..., 1 + dy:1 + dy + h, 1 + dx:1 + dx + w]


def augment(x: torch.Tensor, noise: float = 0.005, jitter: float = 0.2) -> torch.Tensor:
    """One random view of every image in ``x`` (the same view for the whole batch, as CoTTA's
    transform is applied to the batch tensor)."""
    r = torch.rand(5)
    b = (r[0] * 2 - 1) * jitter
    c = 1 + (r[1] * 2 - 1) * jitter
    dy, dx = int(r[2] * 3) - 1, int(r[3] * 3) - 1
    mean = x.mean((1, 2, 3), keepdim=True)
    out = ((x - mean) * c + mean + b).clamp(0, 1)
    out = shift(out, dy, dx)
    return out + noise * torch.randn_like(out)
