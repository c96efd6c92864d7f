"""``out=`` overloads of CompositeImplicitAutograd operators whose functional form is a composite
kernel here: upstream's ``*_out`` functions compute the functional result and write it into the
given tensors (resized, dtype checked) as its structured kernels do, so the door's structured
wrapper serves them, built on first use (the operator handles need the registry loaded).
"""

from __future__ import annotations

from ..dispatch.call import call
from ..ops.kernel_registry import COMPOSITE, KERNELS
from ..ops.native_functions import by_qualname


def _lazy(out_name: str, functional: str):
    built = []

    def run(*args, **kwargs):
        if not built:
            from ..dispatch.structured import out_wrapper
            from ..ops.dispatcher import REGISTRY

            q, _, ov = out_name.partition(".")
            fq, _, fov = functional.partition(".")
            op = REGISTRY.find(f"aten::{q}", ov)
            fop = REGISTRY.find(f"aten::{fq}", fov)
            built.append(out_wrapper(lambda *a, **k: call(functional, *a, **k), op, fop))
        return built[0](*args, **kwargs)

    run.__name__ = out_name
    return run


def register_out_forms(*functionals: str, into: dict = COMPOSITE) -> None:
    """Adds a composite for every out= overload whose functional is one of ``functionals``."""
    table = by_qualname()
    wanted = set(functionals)
    for name in functionals:
        qual = name.partition(".")[0]
        for overload, nf in table.get(f"aten::{qual}", {}).items():
            if nf.kind != "out" or nf.functional not in wanted:
                continue
            out_name = qual + (f".{overload}" if overload else "")
            if out_name not in into:
                into[out_name] = _lazy(out_name, nf.functional)


def register_out_kernels(*functionals: str) -> None:
    """The same, as CPU kernels: out= overloads upstream dispatches to a backend kernel although
    their functional form is CompositeImplicitAutograd (linalg_eigvals.out)."""
    register_out_forms(*functionals, into=KERNELS)
