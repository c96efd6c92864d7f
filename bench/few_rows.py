"""Products of a few rows (a short prompt's prefill, a small batch), ours vs upstream: ``F.linear``
of 2-512 rows over SmolLM2's weight shapes, CPU µs per call, in the same run.

Usage: .venv/bin/python bench/few_rows.py [--rounds 3] [--threads 1]
       (``OPENBLAS_CORETYPE=Haswell`` or ``SkylakeX`` in front: either kernel set; our torch
       switches an AMD Zen 4 to Haswell unless the variable is set, csrc/platform/blas_kernels.py)

Ours' ``F.linear`` of several rows is one BLAS gemm (kernels/linalg.py ``_gemm``), taken turned
round for at most 16 rows and 65,536 outputs: OpenBLAS packs all of the weight for a gemm of so
few rows. Ours' worker also times both orientations as bare numpy calls on the same arrays:
"plain", ``x @ w.T``, and "turned", ``(w @ x.T).T`` copied to C order (the layout the result must
have). Upstream's worker reports its own ``F.linear`` under those keys too, so the numpy rows
print against upstream's ``F.linear`` (docs/performance.md, "Few rows").
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

SHAPES = {(576, 576): (2, 4, 8, 16, 32, 64, 128, 512), (1536, 576): (2, 4, 8, 16, 32, 64, 128),
          (576, 1536): (2, 4, 8, 16, 32, 64, 128), (49152, 576): (2, 4, 8, 16)}


def worker(threads: int) -> None:
    import numpy as np
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    g = torch.Generator().manual_seed(0)
    ours = sys.modules.get("torchnative.csrc.dispatch.door") is not None
    result = {}
    with torch.inference_mode():
        for (n, k), rows in SHAPES.items():
            w = torch.randn(n, k, generator=g)
            for m in rows:
                x = torch.randn(1, m, k, generator=g)
                name = f"{m} x {k} @ {k} x {n}"
                lin = _harness.cpu_us_per_call(lambda x=x, w=w: F.linear(x, w))
                result[f"{name}, F.linear"] = lin
                a, b = x.numpy()[0], w.numpy()
                for how, fn in (("plain", lambda a=a, b=b: np.matmul(a, b.T)),
                                ("turned", lambda a=a, b=b: np.ascontiguousarray(
                                    np.matmul(b, a.T).T))):
                    result[f"{name}, {how}"] = _harness.cpu_us_per_call(fn) if ours else lin
    _harness.emit(result)


if __name__ == "__main__":
    _harness.main(__file__, worker, unit="us")
