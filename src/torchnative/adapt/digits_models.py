"""Source models for digits-C, trained on clean digits: a CNN with BatchNorm and one with GroupNorm.

Training is seeded, but its float32 arithmetic is not the same everywhere: the trained weights
move with the torch, the CPU capability and the thread count (the BatchNorm model's source error
on the continual stream ranges over 48.0-50.7% on one machine across those). So the package ships
the four source models (``weights/``, trained on upstream torch 2.13.0 by
``tools/train_digits_sources.py``): every machine and both torches adapt the very same weights,
and the figures in docs/adapt.md reproduce. ``train`` remains for other sizes and seeds.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from .digits_c import load_digits_split

ARCHS = ("bn", "gn")


def _norm(kind: str, c: int) -> nn.Module:
    return nn.BatchNorm2d(c) if kind == "bn" else nn.GroupNorm(4, c)


class DigitsCNN(nn.Module):
    """conv-norm-relu ×2, max-pool to 4×4, conv-norm-relu, global average, linear."""

    def __init__(self, norm: str = "bn", width: int = 16):
        super().__init__()
        if norm not in ARCHS:
            raise ValueError(f"norm must be one of {ARCHS}, got {norm!r}")
        w = width
        self.features = nn.Sequential(
            nn.Conv2d(1, w, 3, padding=1), _norm(norm, w), nn.ReLU(),
            nn.Conv2d(w, 2 * w, 3, padding=1), _norm(norm, 2 * w), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * w, 2 * w, 3, padding=1), _norm(norm, 2 * w), nn.ReLU())
        self.head = nn.Linear(2 * w, 10)

    def embed(self, x):
        return self.features(x).mean((2, 3))

    def forward(self, x):
        return self.head(self.embed(x))


class DigitsTTT(DigitsCNN):
    """DigitsCNN with a rotation head on the shared features (TTT's self-supervised branch)."""

    def __init__(self, norm: str = "bn", width: int = 16):
        super().__init__(norm, width)
        self.rot_head = nn.Linear(2 * width, 4)


def rotations(x: torch.Tensor):
    """Every image in the four rotations, and the rotation labels 0..3."""
    views = torch.cat([torch.rot90(x, k, (2, 3)) for k in range(4)])
    labels = torch.arange(4).repeat_interleave(x.shape[0])
    return views, labels


def train(norm: str = "bn", epochs: int = 6, seed: int = 0, ttt: bool = False) -> DigitsCNN:
    torch.manual_seed(seed)
    model = DigitsTTT(norm) if ttt else DigitsCNN(norm)
    xt, yt, _, _ = load_digits_split()
    xt, yt = torch.from_numpy(xt), torch.from_numpy(yt)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(len(yt), generator=g)
        for i in range(0, len(yt), 64):
            idx = perm[i:i + 64]
            loss = F.cross_entropy(model(xt[idx]), yt[idx])
            if ttt:  # trained jointly with the rotation task, as TTT requires
                views, rl = rotations(xt[idx])
                loss = loss + F.cross_entropy(model.rot_head(model.embed(views)), rl)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model.eval()


SHIPPED = Path(__file__).resolve().parent / "weights"


def shipped_path(norm: str = "bn", ttt: bool = False) -> Path:
    """The shipped source model's file."""
    return SHIPPED / f"source_{norm}{'_ttt' if ttt else ''}.safetensors"


def source_model(norm: str = "bn", path: str | os.PathLike | None = None,
                 ttt: bool = False) -> DigitsCNN:
    """The source model: the shipped weights, or those at ``path`` (trained and saved there when
    the file does not exist); ``ttt`` adds the jointly trained rotation head."""
    from safetensors.torch import load_file

    if norm not in ARCHS:
        raise ValueError(f"norm must be one of {ARCHS}, got {norm!r}")
    path = Path(path) if path else shipped_path(norm, ttt)
    model = DigitsTTT(norm) if ttt else DigitsCNN(norm)
    if path.exists():
        model.load_state_dict(load_file(str(path)))
        return model.eval()
    model = train(norm, ttt=ttt)
    save(model, path)
    return model


def save(model: nn.Module, path: str | os.PathLike) -> None:
    """``model``'s weights as safetensors at ``path``, written whole or not at all."""
    from safetensors.torch import save_file

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
    save_file({k: v.detach().contiguous() for k, v in model.state_dict().items()}, str(tmp))
    os.replace(tmp, path)


def error(model, x: np.ndarray, y: np.ndarray) -> float:
    with torch.no_grad():
        pred = model(torch.from_numpy(x)).argmax(1).numpy()
    return float((pred != y).mean())
