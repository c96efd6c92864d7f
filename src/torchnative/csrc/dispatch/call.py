"""An operator by name: ``call("add.Tensor", a, b)`` is ``aten::add.Tensor`` through the door.

The one way kernels, composites, autograd formulas and the hand-written bindings call another
operator; its handle is looked up once (these calls are on the hot path).
"""

from __future__ import annotations

from ..core.layouts import preserve_format
from ..ops.dispatcher import DOOR, REGISTRY

_OPS: dict = {}


def op(name: str):
    """The operator handle of ``"name.overload"`` (``"name"`` for the default overload)."""
    handle = _OPS.get(name)
    if handle is None:
        qual, _, overload = name.partition(".")
        handle = REGISTRY.find(f"aten::{qual}", overload)
        if handle is None:
            raise RuntimeError(f"aten::{name} has no schema")
        _OPS[name] = handle
    return handle


def call(name: str, *args, **kwargs):
    # through the door, which installs itself into ops.dispatcher when the package is imported
    return DOOR["aten_dispatch"](op(name), args, kwargs)


def convert_to(self, device=None, dtype=None, non_blocking=False, copy=False,
               memory_format=None):
    """Tensor.to after parsing (and the to.* composites): self when nothing changes, else
    ``_to_copy`` — which is all upstream's CompositeImplicitAutograd ``to`` does."""
    same_dtype = dtype is None or dtype == self._dtype
    same_device = device is None or (device.type == self.device.type)
    fmt = memory_format or preserve_format
    if same_dtype and same_device and not copy and (
            fmt is preserve_format or self.is_contiguous(memory_format=fmt)):
        return self
    kwargs = {"dtype": dtype or self._dtype, "layout": None,
              "device": device or self.device, "pin_memory": None,
              "non_blocking": non_blocking, "memory_format": memory_format}
    return call("_to_copy", self, **kwargs)
