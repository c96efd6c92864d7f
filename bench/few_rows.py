"""Products of a few rows (a short prompt's prefill, a small batch), ours vs upstream: ``F.linear``
of 2-128 rows over SmolLM2's weight shapes, CPU µs per call, in the same run.

Usage: .venv/bin/python bench/few_rows.py [--rounds 3] [--threads 1]

Ours' ``F.linear`` of several rows is one BLAS gemm, ``x @ w.T`` (kernels/fast.py). Ours' worker
also times the same product the other way round, ``(w @ x.T).T`` copied to C order (the layout
the result must have), whose bits OpenBLAS's SkylakeX kernels keep and its Haswell kernels do not
(one-off probe); upstream's worker reports its own ``F.linear`` under that key too, so the row
prints against upstream's ``F.linear``. OpenBLAS's gemm is slow for a few rows of output: the
turned product is where one would gain, if a rule per kernel were taken (docs/performance.md,
"Few rows").
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

SHAPES = ((576, 576), (1536, 576), (576, 1536))
ROWS = (2, 4, 8, 16, 32, 64, 128)


def worker(threads: int) -> None:
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    ours = sys.modules.get("torchnative.csrc.dispatch.door") is not None
    result = {}
    with torch.inference_mode():
        for n, k in SHAPES:
            w = torch.randn(n, k, generator=g)
            for m in ROWS:
                x = torch.randn(1, m, k, generator=g)
                name = f"{m} x {k} @ {k} x {n}"
                result[f"{name}, F.linear"] = lin = _harness.cpu_us_per_call(
                    lambda x=x, w=w: F.linear(x, w))
                if ours:
                    import numpy as np

                    a, b = x.numpy()[0], w.numpy()
                    result[f"{name}, turned"] = _harness.cpu_us_per_call(
                        lambda a=a, b=b: np.ascontiguousarray(np.matmul(b, a.T).T))
                else:
                    result[f"{name}, turned"] = lin
    _harness.emit(result)


if __name__ == "__main__":
    _harness.main(__file__, worker, unit="us")
