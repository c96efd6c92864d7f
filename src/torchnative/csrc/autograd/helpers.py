"""The namespace derivatives.yaml's translated formulas run in.

A formula is C++ (``grad * other.conj()``, ``at::zeros(...)``, ``std::vector``...) translated to
Python by translate.py; every free name it uses that is not an ATen operator resolves here. The
names live in the modules below, written from upstream's definitions
(torch/csrc/autograd/FunctionsManual.cpp): ``cpp_shims`` for C++ methods and language helpers,
``manual/`` for FunctionsManual's formulas by family. Operators are called through Tensor methods
and ``torch.*``, so they reach the door and record a graph when grad mode is on (create_graph).
"""

from __future__ import annotations

from . import cpp_shims
from .manual import (attention, grouped_mm, linalg, nn, pointwise, reduction, rnn, shape,
                     spectral, strided_scatter)

MODULES = (cpp_shims, pointwise, reduction, shape, linalg, grouped_mm, nn, attention, spectral,
           rnn, strided_scatter)


def namespace() -> dict:
    """Every name the formulas may use, one dict; a name defined twice is an error, not a choice."""
    cpp_shims._memory_formats()
    ns: dict = {}
    owner: dict = {}
    for mod in MODULES:
        for k, v in vars(mod).items():
            if k.startswith("__"):
                continue
            if k in ns and ns[k] is not v:
                raise RuntimeError(f"formula helper {k!r} is defined in both {owner[k]} and {mod.__name__}")
            ns.setdefault(k, v)
            owner.setdefault(k, mod.__name__)
    return ns
