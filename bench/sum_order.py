"""Cost of floating sums in upstream's cascade order, ours vs upstream, measured in the same run.

Usage: .venv/bin/python bench/sum_order.py [--rounds 3] [--threads 2]
Cases: full sums of 1e3 and 1e6 float32 elements, the two dim sums of a 1000x1000 matrix,
a decode step's RMSNorm mean (1x1x576) and a prefill's (128x576), a float16 sum of 1e6.
To time an older tree of ours against the same upstream, put its ``src`` first on
``PYTHONPATH`` (e.g. one extracted with ``git archive <commit> src``).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402


def cases(torch):
    g = torch.Generator().manual_seed(0)
    v3, v6 = torch.randn(1000, generator=g), torch.randn(1_000_000, generator=g)
    m = torch.randn(1000, 1000, generator=g)
    r1, r128 = torch.randn(1, 1, 576, generator=g), torch.randn(128, 576, generator=g)
    h6 = torch.randn(1_000_000, generator=g).half()
    return {
        "sum 1e3": lambda: v3.sum(),
        "sum 1e6": lambda: v6.sum(),
        "sum(0) 1000x1000": lambda: m.sum(0),
        "sum(1) 1000x1000": lambda: m.sum(1),
        "mean(-1, keepdim) 1x1x576": lambda: r1.mean(-1, keepdim=True),
        "mean(-1, keepdim) 128x576": lambda: r128.mean(-1, keepdim=True),
        "float16 sum 1e6": lambda: h6.sum(),
    }


def main() -> None:
    args = _harness.worker_args()
    if args.worker:
        _harness.time_cases_worker(cases, args.threads)
        return
    _harness.compare(Path(__file__), args.rounds, args.threads, [])


if __name__ == "__main__":
    main()
