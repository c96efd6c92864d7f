"""torch.func, ours vs upstream, measured in the same run (alternating processes).

Usage: .venv/bin/python bench/func.py [--rounds 3] [--threads 2]
Cases: per-sample gradients of a small MLP (batch 64) and CNN (batch 32) through
``vmap(grad(loss), in_dims=(None, 0, 0))`` and through a Python loop of ``grad``; ``vmap`` of a
pointwise+reduction function and of a matmul over a batch of 64; ``jacrev`` of a 32->32 map.
Times are milliseconds per call (median of 5). The vmap/loop ratio on each side says what the
batch rules save; the ours/upstream ratio what the Python layer costs.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402


def cases(torch):
    from torch.func import functional_call, grad, jacrev, vmap

    F = torch.nn.functional
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.Tanh(), torch.nn.Linear(64, 10))
    cnn = torch.nn.Sequential(torch.nn.Conv2d(1, 8, 3, padding=1), torch.nn.ReLU(),
                              torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                              torch.nn.Linear(8 * 4 * 4, 10))

    def loss_of(model):
        def loss(p, xb, yb):
            return F.cross_entropy(functional_call(model, p, (xb.unsqueeze(0),)), yb.unsqueeze(0))
        return loss

    def params(model):
        return {k: v.detach() for k, v in model.named_parameters()}

    xm, ym = torch.randn(64, 32), torch.randint(0, 10, (64,))
    xc, yc = torch.randn(32, 1, 8, 8), torch.randint(0, 10, (32,))
    pm, pc = params(mlp), params(cnn)
    lm, lc = loss_of(mlp), loss_of(cnn)
    a, w = torch.randn(64, 128), torch.randn(128, 64)
    v = torch.randn(32)
    return {
        "per-sample grads MLP b64 (vmap)": lambda: vmap(grad(lm), in_dims=(None, 0, 0))(pm, xm, ym),
        "per-sample grads MLP b64 (loop)": lambda: [grad(lm)(pm, xm[i], ym[i]) for i in range(64)],
        "per-sample grads CNN b32 (vmap)": lambda: vmap(grad(lc), in_dims=(None, 0, 0))(pc, xc, yc),
        "per-sample grads CNN b32 (loop)": lambda: [grad(lc)(pc, xc[i], yc[i]) for i in range(32)],
        "vmap pointwise+sum b64": lambda: vmap(lambda r: (r.sin() * r).sum(-1))(a),
        "vmap matmul b64": lambda: vmap(lambda r: r @ w)(a),
        "jacrev 32->32": lambda: jacrev(lambda u: u.tanh() * u.sum())(v),
    }


def worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    result = {}
    for name, fn in cases(torch).items():
        result[name] = _harness.median_ms(fn, 5)
    _harness.emit(result)


if __name__ == "__main__":
    _harness.main(__file__, worker, unit="ms")
