"""DDP's C++ helpers: bucket assignment, parameter verification, coalesced broadcast, and the
Reducer/Logger/GradBucket classes (reducer.py)."""

from __future__ import annotations

MODULE = "torch._C._distributed_c10d"


def DDP_NAMES() -> dict:
    from .reducer import DDP_CLASSES

    return dict(DDP_CLASSES)
