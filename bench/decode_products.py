"""A decode step's matrix products alone, ours vs upstream: SmolLM2-135M's 211 ``F.linear`` of
one token (30 layers of q, k, v, o, gate, up, down and the 49152-row lm_head), each weight its
own 540 MB in all, so every product reads its weight from memory as a decode step does; and the
same products with one layer's weights reused (in cache). CPU ms per token, medians. Every
weight is read four times first and, under ``TORCHNATIVE_HUGE_PAGES=1``, ours' move of the
weights onto huge pages (csrc/platform/huge_pages.py) waited for, as after a decode's warm-up:
its one-off CPU ms is a row of its own (0 without the variable, NaN on upstream), and every row
after it reads the weights where they then are.

Usage: .venv/bin/python bench/decode_products.py [--rounds 3] [--threads 1]

Ours' worker also times the numpy primitives a one-row product can use on the same arrays:
BLAS gemv over the row-major weight (``np.dot(x, w.T)``), one BLAS dot per row (``np.vecdot``,
kernels/support/gemv.py) and ``np.einsum``. Upstream's worker reports the same keys with its
own ``F.linear`` only, so the numpy rows print against upstream's ``F.linear``. The error rows
are each side's one-row ``F.linear`` against its float64 product of the same seeded operands.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

SHAPES = [(576, 576), (192, 576), (192, 576), (576, 576), (1536, 576), (1536, 576), (576, 1536)]
LAYERS, VOCAB = 30, 49152


def _ms(fn) -> float:
    return _harness.median_ms(fn, 5, timer=time.process_time)


def worker(threads: int) -> None:
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    weights = [torch.randn(s, generator=g) for _ in range(LAYERS) for s in SHAPES]
    weights.append(torch.randn(VOCAB, 576, generator=g))
    hot = [w for w in weights[:len(SHAPES)] for _ in range(LAYERS)]  # one layer's, reused
    xs = {k: torch.randn(1, 1, k, generator=g) for k in (576, 1536)}
    result = {}
    with torch.inference_mode():
        # as a decode's warm-up does: under the opt-in, ours' weights qualify for huge pages at
        # their fourth one-row product, and the move is waited for before anything is timed
        for _ in range(4):
            for w in weights:
                F.linear(xs[w.shape[1]], w)
        result["one-off: the weights onto huge pages, CPU ms"] = _harness.settle_huge_pages()
        for name, ws in (("streamed", weights), ("in cache", hot)):
            result[f"F.linear, {name} (CPU ms/token)"] = _ms(
                lambda ws=ws: [F.linear(xs[w.shape[1]], w) for w in ws])
        # accuracy: the largest error of a one-row product against the float64 one, per shape
        for n, k in ((1536, 576), (576, 1536), (VOCAB, 576)):
            w, x = torch.randn(n, k, generator=g), torch.randn(1, 1, k, generator=g)
            err = (F.linear(x, w).double() - F.linear(x.double(), w.double())).abs().max()
            result[f"max error vs float64, {n}x{k} (x1e-6)"] = float(err) * 1e6
        ours = sys.modules.get("torchnative.csrc.dispatch.door") is not None
        prims = ("np.dot(x, w.T)", "np.vecdot(w, x)", "np.einsum")
        for name, ws in (("streamed", weights), ("in cache", hot)):
            if not ours:  # upstream: its F.linear stands in each numpy row
                for prim in prims:
                    result[f"{prim}, {name} (CPU ms/token)"] = result[f"F.linear, {name} (CPU ms/token)"]
                continue
            import numpy as np

            a = {k: v.numpy().reshape(-1) for k, v in xs.items()}
            arrs = [w.numpy() for w in ws]
            fns = (lambda w: np.dot(a[w.shape[1]], w.T), lambda w: np.vecdot(w, a[w.shape[1]]),
                   lambda w: np.einsum("ij,j->i", w, a[w.shape[1]]))
            for prim, fn in zip(prims, fns):
                result[f"{prim}, {name} (CPU ms/token)"] = _ms(
                    lambda fn=fn, arrs=arrs: [fn(w) for w in arrs])
    _harness.emit(result)


def main() -> None:
    h = _harness.worker_args()
    if h.worker:
        worker(h.threads)
        return
    rows = _harness.compare(Path(__file__), h.rounds, h.threads, [], unit="")
    print("(numpy rows: ours' primitives against upstream's F.linear of the same row)")
    return rows


if __name__ == "__main__":
    main()
