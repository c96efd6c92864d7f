"""Deterministic-algorithms state (torch.use_deterministic_algorithms and
torch.utils.deterministic.fill_uninitialized_memory), process-wide as upstream's globalContext.

Kept in core because kernels read it: with both switches on, upstream's empty-family factories
fill the memory they return (NaN for floating and complex dtypes, the largest value otherwise),
so results never depend on what the allocator left there.
"""

from __future__ import annotations

STATE = {"enabled": False, "warn_only": False, "fill_uninitialized_memory": True}


def set_deterministic_algorithms(mode, *, warn_only=False) -> None:
    for name, value, pos in (("mode", mode, 1), ("warn_only", warn_only, None)):
        if not isinstance(value, bool):
            where = f"(position {pos}) " if pos else ""
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name}' {where}must be "
                            f"bool, not {type(value).__name__}")
    STATE["enabled"], STATE["warn_only"] = mode, warn_only


def set_fill_uninitialized_memory(mode) -> None:
    if not isinstance(mode, bool):
        raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
    STATE["fill_uninitialized_memory"] = mode


def fills_uninitialized_memory() -> bool:
    return STATE["enabled"] and STATE["fill_uninitialized_memory"]


def fill_deterministic_(t):
    """Upstream's fill_empty_deterministic_ on a freshly allocated cpu tensor."""
    if t._np is None or t.numel() == 0:
        return t
    import numpy as np

    dt = t.dtype
    if dt.is_floating_point or dt.is_complex:
        t._np[...] = np.nan
    elif dt.__reduce__() == "bool":
        t._np[...] = True
    else:
        t._np[...] = np.iinfo(t._np.dtype).max
    return t


def _get(key):
    return lambda: STATE[key]


TORCH_C = {
    "torch._C._set_deterministic_algorithms": set_deterministic_algorithms,
    "torch._C._get_deterministic_algorithms": _get("enabled"),
    "torch._C._get_deterministic_algorithms_warn_only": _get("warn_only"),
    "torch._C._set_deterministic_fill_uninitialized_memory": set_fill_uninitialized_memory,
    "torch._C._get_deterministic_fill_uninitialized_memory": _get("fill_uninitialized_memory"),
}
