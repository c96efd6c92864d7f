"""cuBLAS's reduced-precision reduction switches (``at::Context``), behind
``torch.backends.cuda.matmul.allow_{fp16,bf16}_reduced_precision_reduction[_split_k]``.

A CPU build keeps them as state: nothing of ours reads them (upstream's CPU kernels do not
either). Each is (allow reduced precision, allow split-K), both on by default; split-K cannot be
turned off while reduced precision is allowed.
"""

from __future__ import annotations

from ..core.typename import typename

_STATE = {"fp16": (True, True), "bf16": (True, True)}


def _setter(kind: str):
    def set_(*args) -> None:
        if not args:
            raise TypeError(f"function takes at least 1 argument ({len(args)} given)")
        if len(args) > 2:
            raise TypeError(f"function takes at most 2 arguments ({len(args)} given)")
        allow, splitk = args[0], args[1] if len(args) > 1 else True
        for name, value in (("allow_reduced_precision", allow), ("allow_splitk", splitk)):
            if type(value) is not bool:
                raise RuntimeError(f"set_allow_{kind}_reduction_cublas expects a bool for {name}, "
                                   f"but got {typename(value)}")
        if allow and not splitk:
            raise RuntimeError("allow_splitk=False is not supported when reduced precision "
                               "reductions are enabled")
        _STATE[kind] = (allow, splitk)

    return set_


def _getter(kind: str):
    return lambda: _STATE[kind]


TORCH_C = {f"torch._C._{verb}_cublas_allow_{kind}_reduced_precision_reduction": make(kind)
           for kind in ("fp16", "bf16") for verb, make in (("get", _getter), ("set", _setter))}
