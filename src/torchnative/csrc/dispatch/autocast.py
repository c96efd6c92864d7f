"""Autocast on CPU: the AutocastCPU key's kernels (ATen/autocast_mode.cpp), in front of autograd.

While ``torch.autocast("cpu")`` is on, an operator with a CPU autocast policy gets its floating
CPU tensor arguments cast before it runs; every other operator falls through. The policies and
which operators have one are upstream's, read from its dispatcher by tools/gen_autocast_table.py
(autocast_cpu.json):

- lower_precision_fp: float32/float16/bfloat16 arguments to the autocast dtype (matmuls, convs);
- fp32: to float32 (losses, linear algebra, fft, pooling of 3-d inputs ...);
- promote: to the widest floating type among the arguments (cat, stack, index_copy).

float64 arguments are never cast. The operator then runs with autocast excluded, as upstream's
kernel does (its decomposition's operators are not cast again). Casts of float32 leaves that
require grad to the autocast dtype are cached until the outermost autocast region exits, so a
weight used twice in a forward is cast once (one ToCopyBackward0), as upstream's cache does.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from ..core import dtypes as D
from ..core.tensor import TensorBase

_F32 = D.BY_NAME["float32"]
_F64 = D.BY_NAME["float64"]
# the device types autocast knows (c10's autocast dispatch keys), each with its default dtype
_DEFAULT_DTYPE = {"cpu": "bfloat16", "xla": "bfloat16", "hpu": "bfloat16", "maia": "bfloat16",
                  "cuda": "float16", "xpu": "float16", "mps": "float16", "ipu": "float16",
                  "mtia": "float16", "privateuseone": "float16"}
DEVICE_TYPES = frozenset(_DEFAULT_DTYPE)

# any thread has CPU autocast on: the door's one check on its hot path
LIVE = [False]
_ON_THREADS: set = set()


class _TLS(threading.local):
    def __init__(self):
        self.enabled: dict = {}
        self.dtype: dict = {}
        self.cache_enabled = True
        self.nesting = 0
        self.excluded = 0  # inside an autocast kernel or _DisableAutocast


TLS = _TLS()
_CACHE: dict = {}  # id(float32 leaf) -> (leaf, its cast)
_POLICY: dict | None = None


def _policies() -> dict:
    global _POLICY
    if _POLICY is None:
        doc = json.loads((Path(__file__).with_name("autocast_cpu.json")).read_text())
        _POLICY = doc["policies"]
    return _POLICY


# --- state (torch._C's autocast functions) -----------------------------------------------------

def is_enabled(device_type: str) -> bool:
    return TLS.enabled.get(device_type, False) and not TLS.excluded


def set_enabled(device_type: str, enabled: bool) -> None:
    TLS.enabled[device_type] = bool(enabled)
    if device_type == "cpu":
        ident = threading.get_ident()
        (_ON_THREADS.add if enabled else _ON_THREADS.discard)(ident)
        LIVE[0] = bool(_ON_THREADS)


def any_enabled() -> bool:
    return any(TLS.enabled.values()) and not TLS.excluded


def get_dtype(device_type: str):
    dtype = TLS.dtype.get(device_type)
    if dtype is None:
        if device_type not in _DEFAULT_DTYPE:   # another device type: nothing was ever set
            raise RuntimeError("unsupported scalarType")
        dtype = D.BY_NAME[_DEFAULT_DTYPE[device_type]]
    return dtype


def set_dtype(device_type: str, dtype) -> None:
    TLS.dtype[device_type] = dtype


def clear_cache() -> None:
    _CACHE.clear()


class Excluded:
    """What torch._C._DisableAutocast does: autocast off for the block, on again after."""

    def __enter__(self):
        TLS.excluded += 1
        return self

    def __exit__(self, *exc):
        TLS.excluded -= 1
        return False


# --- the kernel -------------------------------------------------------------------------------

def _eligible(t) -> bool:
    return isinstance(t, TensorBase) and t._dtype.is_floating_point and t._dtype is not _F64 \
        and t.device.type == "cpu"


def _cached_cast(to, arg, lower):
    if isinstance(arg, (list, tuple)):
        return type(arg)(_cached_cast(to, a, lower) for a in arg)
    if not _eligible(arg) or arg._dtype is to:
        return arg
    from .call import call

    if (to is lower and arg._dtype is _F32 and arg.requires_grad and arg.is_leaf
            and not arg._is_view() and TLS.cache_enabled):
        hit = _CACHE.get(id(arg))
        if hit is not None and hit[0] is arg:
            return hit[1]
        cast = call("to.dtype", arg, to)
        _CACHE[id(arg)] = (arg, cast)
        return cast
    return call("to.dtype", arg, to)


def _promoted(lower, values) -> D.dtype:
    """autocast's prioritize over the arguments: float32 wins, float64 is ignored, two lower
    precision types must be the same one."""
    current = lower
    for v in values:
        for t in (v if isinstance(v, (list, tuple)) else (v,)):
            if not _eligible(t):
                continue
            if current is _F32 or t._dtype is _F32:
                current = _F32
            elif not (current is lower and t._dtype is lower):
                raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def policy_of(op) -> str | None:
    cached = op.cache.get("autocast", False)
    if cached is False:
        cached = None
        if op.qualname.startswith("aten::"):
            short = op.name.split("::", 1)[1]
            cached = _policies().get(short[:-len(".default")] if short.endswith(".default")
                                     else short)
        op.cache["autocast"] = cached
    return cached


def wants(op) -> bool:
    """Whether this call goes through autocast's kernel (the door asks once LIVE is set)."""
    return not TLS.excluded and TLS.enabled.get("cpu", False) and policy_of(op) is not None


def dispatch(op, args: tuple, kwargs: dict, redispatch):
    """``redispatch(op, args, kwargs)`` with the arguments cast per the operator's policy,
    autocast excluded meanwhile (``wants(op)`` said yes)."""
    policy = policy_of(op)
    TLS.excluded += 1
    try:
        lower = get_dtype("cpu")
        if policy == "lower_precision_fp":
            to = lower
        elif policy == "fp32":
            to = _F32
        else:
            to = _promoted(lower, list(args) + list(kwargs.values()))
        args = tuple(_cached_cast(to, a, lower) for a in args)
        kwargs = {k: _cached_cast(to, v, lower) for k, v in kwargs.items()}
        return redispatch(op, args, kwargs)
    finally:
        TLS.excluded -= 1
