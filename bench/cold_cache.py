"""What a decode step's small operators cost right after a weight has streamed through the caches,
ours vs upstream, in the same run.

Usage: .venv/bin/python bench/cold_cache.py [--rounds 3] [--threads 1]

A decode step reads each weight once (SmolLM2-135M: 540 MB per token), so every product evicts
what the core's L1 and L2 held, and the small operators that follow (a view, a transpose, a
multiply, a cache ``cat``, a residual add, a reshape) run with the interpreter's and the
library's own code and data cold. Each case times five such operators (wall time, the median
of 200 tries) after a one-row ``F.linear`` over a 1536x576 weight that is streamed (one of 60
distinct weights, 212 MB in all, taken in turn) and after one over a 64x576 weight that stays in
cache. The difference is the cost of the refill (docs/performance.md, "On an Intel Xeon": on a
quiet machine about the same on both sides).
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

TRIES, STREAMED = 200, 60


def worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    streamed = [torch.randn(1536, 576, generator=g) for _ in range(STREAMED)]
    cached = torch.randn(64, 576, generator=g)
    x = torch.randn(1, 1, 576, generator=g)

    def small_ops():
        a = x.view(1, 1, 9, 64).transpose(1, 2)
        b = a * 2.0
        c = torch.cat([b, b], dim=-2)
        return (x + x).reshape(1, -1), c

    times = {"after a streamed product": [], "after a cached product": []}
    with torch.inference_mode():
        for i in range(TRIES + 20):
            for case, w in (("after a streamed product", streamed[i % STREAMED]),
                            ("after a cached product", cached)):
                torch.nn.functional.linear(x, w)
                t0 = time.perf_counter()
                small_ops()
                if i >= 20:
                    times[case].append(time.perf_counter() - t0)
    result = {f"five small operators {case}, us": statistics.median(v) * 1e6
              for case, v in times.items()}
    result["their cost of the refill, us"] = (result["five small operators after a streamed product, us"]
                                              - result["five small operators after a cached product, us"])
    _harness.emit(result)


if __name__ == "__main__":
    _harness.main(__file__, worker, unit="")
