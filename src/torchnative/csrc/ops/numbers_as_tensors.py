"""``torch._C._should_allow_numbers_as_tensors``: the operators whose Tensor parameters accept a
Python number (upstream's argument parser keeps this list; FakeTensorMode asks it before it
treats a number argument as a tensor). The list is upstream 2.13.0's, checked against its answer
for every operator name."""

from __future__ import annotations

_ALLOWED = frozenset(
    [f"{base}{suffix}" for base in ("add", "div", "divide", "mul", "multiply", "sub", "subtract",
                                    "true_divide", "floor_divide")
     for suffix in ("", "_", "_out")]
    + ["to", "_to_copy", "copy_", "copy", "_conj"])  # _conj: mul's backward calls it


def should_allow_numbers_as_tensors(name: str) -> bool:
    return name in _ALLOWED


TORCH_C = {"torch._C._should_allow_numbers_as_tensors": should_allow_numbers_as_tensors}
