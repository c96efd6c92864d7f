"""Cost of vector norms in upstream's loops and order, ours vs upstream, measured in the same run.

Usage: .venv/bin/python bench/norm_order.py [--rounds 3] [--threads 2]
Cases: 2-norms of 1e3 and 1e6 float32 elements, the row and column 2-norms of a 1000x1000
matrix, 1-norm and 3-norm of 1e6, a float16 2-norm of 1e6 (the generic loop).
An older tree of ours is timed as in bench/sum_order.py (its ``src`` first on ``PYTHONPATH``).
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
    h6 = torch.randn(1_000_000, generator=g).half()
    vn = torch.linalg.vector_norm
    return {
        "norm 1e3": lambda: vn(v3),
        "norm 1e6": lambda: vn(v6),
        "norm(dim=1) 1000x1000": lambda: vn(m, dim=1),
        "norm(dim=0) 1000x1000": lambda: vn(m, dim=0),
        "1-norm 1e6": lambda: vn(v6, 1),
        "3-norm 1e6": lambda: vn(v6, 3),
        "float16 norm 1e6": lambda: vn(h6),
    }


if __name__ == "__main__":
    _harness.main(__file__, lambda threads: _harness.time_cases_worker(cases, threads))
