"""resize_as_ (Resize.cpp) and the functional resize / resize_as (the composites upstream
generates for functionalization: a clone resized in place). resize_ itself lives with the other
storage-level in-place kernels (copy.py)."""

from __future__ import annotations

from ..core.layouts import preserve_format, suggest_memory_format
from ..dispatch.call import call
from ..ops.kernel_registry import kernel


@kernel("resize_as_", meta=True)
def resize_as_(self, the_template, *, memory_format=None):
    """resize_ to the template's sizes; a memory format then restrides self (preserve: the
    template's suggested format)."""
    call("resize_", self, list(the_template.shape))
    if memory_format is not None:
        if memory_format is preserve_format:
            memory_format = suggest_memory_format(tuple(the_template.shape),
                                                  tuple(the_template.stride()))
        call("resize_", self, list(the_template.shape), memory_format=memory_format)
    return self


@kernel("resize", meta=True)
def resize(self, size, *, memory_format=None):
    out = call("clone", self)
    return call("resize_", out, list(size), memory_format=memory_format)


@kernel("resize_as", meta=True)
def resize_as(self, the_template, *, memory_format=None):
    out = call("clone", self)
    return resize_as_(out, the_template, memory_format=memory_format)
