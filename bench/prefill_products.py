"""SmolLM2-135M's prefill products, one `F.linear` per shape, ours vs upstream in the same run:
CPU µs per call (median of five repeats; GFLOP/s is 2 * rows * in * out / µs / 1e3).

Usage: .venv/bin/python bench/prefill_products.py [--rounds 3] [--threads 1]
Ours' products are numpy's OpenBLAS (its kernel set per CPU: `OPENBLAS_CORETYPE` in front of the
command picks another), upstream's MKL: on an Intel Xeon this is where prefill's gap comes from
(docs/performance.md, "On an Intel Xeon with AVX10.1").
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

# (rows, in, out): 128 and 512 prompt tokens through the attention/MLP projections; the LM head
SHAPES = ((128, 576, 1536), (128, 1536, 576), (512, 576, 1536), (128, 576, 576),
          (128, 576, 49152))


def cases(torch):
    torch.manual_seed(0)
    F = torch.nn.functional
    out = {}
    for m, k, n in SHAPES:
        a, w = torch.randn(m, k), torch.randn(n, k)
        out[f"linear {m}x{k} by {n}x{k}^T"] = lambda a=a, w=w: F.linear(a, w)
    return out


if __name__ == "__main__":
    _harness.main(__file__, lambda threads: _harness.time_cases_worker(cases, threads), unit="us")
