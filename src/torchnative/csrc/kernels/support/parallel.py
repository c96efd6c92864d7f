"""ATen's thread settings (ATen/Parallel.h): intra-op threads (the BLAS budget, the one threaded
code we run) and inter-op threads (recorded: operators run on the calling thread)."""

from __future__ import annotations

import os

from .blas_threads import set_budget

_threads = {"intra": int(os.environ.get("OMP_NUM_THREADS", "0") or 0) or os.cpu_count() or 1,
            "inter": os.cpu_count() or 1}


def get_num_threads() -> int:
    return _threads["intra"]


def set_num_threads(n: int) -> None:
    """Intra-op threads: the BLAS numpy calls is the only threaded code we run, so this sets
    its thread count (through threadpoolctl)."""
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads["intra"] = int(n)
    set_budget(int(n))


def get_num_interop_threads() -> int:
    return _threads["inter"]


def set_num_interop_threads(n: int) -> None:
    if n <= 0:
        raise RuntimeError("Expected positive number of threads")
    _threads["inter"] = int(n)


def init_num_threads() -> None:
    """Nothing to initialize: torchnative runs operators on the calling thread."""
