"""scikit-learn's 8x8 digits for federated experiments: a fixed train/test split, a Dirichlet
label-skew partition across participants, and a small classifier."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


def load(seed: int = 0, test_fraction: float = 0.2):
    """(x_train, y_train, x_test, y_test) as numpy arrays; pixels scaled to [0, 1]."""
    from sklearn.datasets import load_digits
    d = load_digits()
    x = (d.data / 16.0).astype(np.float64)
    y = d.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = int(round(test_fraction * len(y)))
    te, tr = order[:n_test], order[n_test:]
    return x[tr], y[tr], x[te], y[te]


def dirichlet_split(labels: np.ndarray, n: int, alpha: float, seed: int = 0, min_size: int = 8) -> list:
    """Per class, shares drawn from Dir(alpha) over the participants (Hsu et al. 2019); redrawn
    until every participant holds at least `min_size` samples. Smaller alpha, stronger skew."""
    if alpha <= 0:
        raise ValueError(f"alpha must be > 0, got {alpha}")
    rng = np.random.default_rng(seed)
    classes = np.unique(labels)
    for _ in range(1000):
        parts = [[] for _ in range(n)]
        for c in classes:
            idx = rng.permutation(np.flatnonzero(labels == c))
            cuts = (np.cumsum(rng.dirichlet([alpha] * n)) * len(idx)).astype(int)[:-1]
            for p, chunk in enumerate(np.split(idx, cuts)):
                parts[p].extend(chunk.tolist())
        if min(len(p) for p in parts) >= min_size:
            return [np.sort(np.array(p, dtype=np.int64)) for p in parts]
    raise ValueError(f"could not give each of {n} participants {min_size} samples at alpha={alpha}")


def model(seed: int = 0, hidden: int = 32, dtype=torch.float32) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, hidden), nn.ReLU(), nn.Linear(hidden, 10)).to(dtype)


def batches(x, y, batch_size: int = 16, dtype=torch.float32) -> list:
    """Fixed-order batches (the same on every torch, so runs can be compared step by step)."""
    xt, yt = torch.tensor(x, dtype=dtype), torch.tensor(y, dtype=torch.int64)
    return [(xt[i:i + batch_size], yt[i:i + batch_size]) for i in range(0, len(yt), batch_size)]


def accuracy(net: nn.Module, x, y, dtype=torch.float32) -> float:
    with torch.no_grad():
        pred = net(torch.tensor(x, dtype=dtype)).argmax(dim=1)
    return float((pred == torch.tensor(y)).double().mean())
