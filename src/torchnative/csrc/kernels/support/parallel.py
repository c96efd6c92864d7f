"""ATen's thread settings (ATen/Parallel.h): intra-op threads (the BLAS budget, the one threaded
code we run) and inter-op threads (recorded: operators run on the calling thread)."""

from __future__ import annotations

import os

from .blas_threads import set_budget



def _env_threads(name: str):
    """A thread count from the environment as MKL reads it: the first of a comma list, a
    positive integer, else nothing (an invalid value is ignored, not an error)."""
    try:
        n = int(os.environ.get(name, "").split(",")[0])
    except ValueError:
        return None
    return n if n > 0 else None


def physical_cores() -> int:
    """The physical cores among the CPUs this process may run on (its affinity mask)."""
    try:
        cpus = os.sched_getaffinity(0)
    except AttributeError:
        cpus = range(os.cpu_count() or 1)
    cores = set()
    for c in cpus:
        topology = f"/sys/devices/system/cpu/cpu{c}/topology/"
        try:
            with open(topology + "physical_package_id") as pkg, open(topology + "core_id") as core:
                cores.add((pkg.read().strip(), core.read().strip()))
        except OSError:
            cores.add(("cpu", c))   # no topology: each CPU its own core
    return max(1, len(cores))


def default_intra_threads() -> int:
    """Upstream's x86 build starts with MKL's thread count (init_num_threads): MKL_NUM_THREADS,
    else OMP_NUM_THREADS, else the physical cores, a request capped at the physical cores unless
    MKL_DYNAMIC is false. Intra-op threads decide where upstream's loops cut their elements
    into chunks (sums, SIMD tails), so the count is upstream's, not the logical CPUs."""
    cores = physical_cores()
    n = _env_threads("MKL_NUM_THREADS") or _env_threads("OMP_NUM_THREADS")
    if n is None:
        return cores
    if os.environ.get("MKL_DYNAMIC", "").strip().lower() == "false":
        return n
    return min(n, cores)


_threads = {"intra": default_intra_threads(), "inter": os.cpu_count() or 1}


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
