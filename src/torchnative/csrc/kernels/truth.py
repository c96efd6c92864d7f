"""``_is_all_true`` / ``_is_any_true``: a bool tensor's ``all()`` / ``any()`` as upstream's
CompositeExplicitAutograd kernels compute them (``torch._assert_async``-style checks in models
such as ProphetNet and VITS reach them)."""

from __future__ import annotations

from ..core import dtypes as D
from ..dispatch.call import call
from ..ops.kernel_registry import kernel

_BOOL = D.BY_NAME["bool"]


def _check(self) -> None:
    if self._dtype is not _BOOL:
        raise RuntimeError("self.scalar_type() == at::kBool INTERNAL ASSERT FAILED: "
                           f"expected a bool tensor, got {self._dtype._cpp_name}")


@kernel("_is_all_true")
def _is_all_true(self):
    _check(self)
    return call("all", self)


@kernel("_is_any_true")
def _is_any_true(self):
    _check(self)
    return call("any", self)
