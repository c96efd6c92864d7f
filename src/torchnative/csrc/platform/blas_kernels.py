"""numpy's BLAS library, and which of its kernel sets runs our products on this CPU.

numpy's wheels bundle OpenBLAS built for many CPUs at once (DYNAMIC_ARCH): when loaded it picks
one kernel set for the CPU it finds. On AMD's Zen 4 (family 25 with AVX-512) that is its
SkylakeX (AVX-512) set, and there its Haswell (AVX2) set is the faster one for float32
products: up to 32% less time for SmolLM2's products of 8 rows and more (14-32% at 32-128 rows),
about 10% for a decode step's one-row products; products of two or four rows by the small
weights lose (SkylakeX's small-matrix path: 2x576 by 576x576 28 -> 75 µs). Measured with
``bench/few_rows.py`` and ``bench/decode_products.py`` under ``OPENBLAS_CORETYPE``,
docs/performance.md "OpenBLAS's kernels on Zen 4".

So on that CPU ``choose`` switches the library to its Haswell set, the one every AVX2 CPU
already runs (the suite passes under both), through OpenBLAS's own switch: its initializer reads
``OPENBLAS_CORETYPE``, and DYNAMIC_ARCH builds export it with the matching finalizer. It runs
once, when our torch is imported, before any product. The library is numpy's, so numpy's own
products in the process run on the same set afterwards (a numpy product running in another
thread during the import would see its kernel table change under it). A ``OPENBLAS_CORETYPE``
set by the user is left to decide, as is any other CPU or BLAS library.
"""

from __future__ import annotations

import functools
import os

from .cpu_capability import cpuinfo

# the CPUs on which another kernel set was measured faster: (vendor, family, the set OpenBLAS
# picks there) -> the set to run. AMD family 25 is Zen 3 and Zen 4; OpenBLAS picks SkylakeX only
# on the Zen 4, which has AVX-512
_FASTER = {("AuthenticAMD", "25", "SkylakeX"): "Haswell"}


@functools.cache
def controller():
    """threadpoolctl's controller of numpy's BLAS library (None without one)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    libs = [c for c in ThreadpoolController().lib_controllers if c.user_api == "blas"]
    return libs[0] if libs else None


_CORENAME = ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename",
             "openblas_get_corename64_", "openblas_get_corename")
_SWITCH = ("gotoblas_dynamic_quit", "gotoblas_dynamic_init")  # DYNAMIC_ARCH builds only


@functools.cache
def _openblas():
    """numpy's OpenBLAS as a ctypes library and its core-name function, or None: the OpenBLAS
    this process has mapped (Linux) in numpy's wheel folder, else the only one mapped. Not
    through threadpoolctl, which keeps the first kernel set it reads as the library's for good
    (numpy.show_runtime would then report the set switched from)."""
    import ctypes

    import numpy

    try:
        with open("/proc/self/maps") as f:
            paths = {fields[5] for fields in (line.rstrip("\n").split(None, 5) for line in f)
                     if len(fields) == 6 and "openblas" in os.path.basename(fields[5]).lower()}
    except OSError:
        return None
    wheel = os.path.dirname(os.path.dirname(numpy.__file__)) + os.sep + "numpy.libs" + os.sep
    mine = [p for p in paths if p.startswith(wheel)] or list(paths)
    if len(mine) != 1:
        return None
    try:
        lib = ctypes.CDLL(mine[0])
    except OSError:  # replaced on disk since it was loaded ("(deleted)")
        return None
    for name in _CORENAME:
        fn = getattr(lib, name, None)
        if fn is not None:
            fn.restype = ctypes.c_char_p
            return lib, fn
    return None


def kernel_set() -> str | None:
    """The kernel set numpy's OpenBLAS runs now ("Haswell", "SkylakeX", ...); None for another
    BLAS library."""
    found = _openblas()
    return found[1]().decode() if found is not None else None


def _wanted(current: str | None) -> str | None:
    if current is None or os.environ.get("OPENBLAS_CORETYPE"):
        return None
    return _FASTER.get((cpuinfo("vendor_id"), cpuinfo("cpu family"), current))


def _switch(lib, kernels: str) -> None:
    os.environ["OPENBLAS_CORETYPE"] = kernels
    try:
        lib.gotoblas_dynamic_quit()
        lib.gotoblas_dynamic_init()
    finally:
        del os.environ["OPENBLAS_CORETYPE"]  # the user's environment stays as it was


def choose() -> str | None:
    """Switch numpy's OpenBLAS to the kernel set measured faster on this CPU, if there is one;
    returns the set it switched to (None: left as it was, also when the library would not take
    it: it is switched back)."""
    current = kernel_set()
    target = _wanted(current)
    if target is None:
        return None
    lib = _openblas()[0]
    if not all(hasattr(lib, f) for f in _SWITCH):
        return None
    _switch(lib, target)
    if kernel_set() == target:
        return target
    _switch(lib, current)
    return None
