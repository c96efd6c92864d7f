"""SmolLM2-135M prefill forwards: CPU time, user/system split and minor page faults per forward.

Usage: .venv/bin/python bench/prefill_faults.py      (ours)
       .venv-upstream/bin/python bench/prefill_faults.py   (upstream, for the same-run figure)

One thread, inference mode, a 128-token forward then two 512-token forwards (bench/decode.py's
prefill ids). Fresh pages (minor faults) are system time and cold caches: a kernel that makes
float64 temporaries as large as its input pays them on every call.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path


def main() -> None:
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))  # the model loader
    from torchnative.apps.chat import load

    torch.set_num_threads(1)
    _, model = load(None, None, quiet=True, dtype=torch.float32)
    with torch.inference_mode():
        for n in (128, 512, 512):
            ids = torch.arange(n).remainder(1000).add(10).reshape(1, n)
            a, c = resource.getrusage(resource.RUSAGE_SELF), time.process_time()
            model(ids)
            b = resource.getrusage(resource.RUSAGE_SELF)
            print(f"prefill {n}: {(time.process_time() - c) * 1e3:.0f} CPU ms, "
                  f"user {b.ru_utime - a.ru_utime:.3f} s, system {b.ru_stime - a.ru_stime:.3f} s, "
                  f"minor faults {b.ru_minflt - a.ru_minflt}")


if __name__ == "__main__":
    main()
