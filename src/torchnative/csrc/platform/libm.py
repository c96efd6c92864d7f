"""glibc's math functions through ctypes, loaded on first use: where upstream's C++ calls libm
(``std::log`` of a float is ``logf``, ``std::lgamma``, ``powf`` ...) and neither numpy nor
Python's ``math`` gives its bits (``math.lgamma`` is CPython's own)."""

from __future__ import annotations

import ctypes
import ctypes.util

_LIB: list = []
_FUNCTIONS: dict = {}


def library():
    if not _LIB:
        _LIB.append(ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6"))
    return _LIB[0]


def function(name: str, single: bool = False, nargs: int = 1):
    """libm's ``name`` over ``nargs`` floats (``single``) or doubles, returning the same type."""
    f = _FUNCTIONS.get(name)
    if f is None:
        t = ctypes.c_float if single else ctypes.c_double
        f = getattr(library(), name)
        f.restype, f.argtypes = t, [t] * nargs
        _FUNCTIONS[name] = f
    return f


def versioned(name: str, nargs: int, version: bytes = b"GLIBC_2.2.5"):
    """``name@version`` of a double function (the symbol version upstream's libtorch_cpu
    imports), else the default version (a libc without ``dlvsym``)."""
    proto = ctypes.CFUNCTYPE(ctypes.c_double, *([ctypes.c_double] * nargs))
    try:
        dlvsym = ctypes.CDLL(None).dlvsym
        dlvsym.restype, dlvsym.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p,
                                                            ctypes.c_char_p]
        addr = dlvsym(library()._handle, name.encode(), version)
    except AttributeError:  # not glibc
        addr = None
    return proto(addr) if addr else proto((name, library()))
