"""Outputs whose exact values the op does not specify, and what is accepted instead.

- Index outputs of sort/argsort (stable=False), topk, kthvalue, median, nanmedian, mode, cummax,
  cummin: where the input has ties, any index of an equal element is correct (the documentation
  promises no particular one). Accepted: in range, and gathering the input at ours' indices gives
  exactly what gathering at upstream's gives (NaN equals NaN; -0 ties +0 as they compare equal); for
  sort/argsort the indices along the dim must also be a permutation. sort/argsort with stable=True
  specify the order, so their indices must be identical. max/min/argmax/argmin promise the first
  occurrence and are compared exactly (not listed here).
- unique(sorted=False, dim=None): the order of the unique values is unspecified. Accepted: the same
  set of values, ours' inverse mapping reproduces the input, and each value has upstream's count.
Random ops are not here: under the same seed they must reproduce upstream's bits (compare.seeded).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Arg:
    name: str
    pos: int | None  # position in the call (input is 0), None for keyword-only
    default: object

    def get(self, args: list, kwargs: dict):
        if self.name in kwargs:
            return kwargs[self.name]
        if self.pos is not None and self.pos < len(args):
            return args[self.pos]
        return self.default


@dataclass(frozen=True)
class IndexSpec:
    indices: int           # which output of the tuple holds indices
    dim: Arg
    keepdim: Arg | None = None   # reductions: indices lose the dim unless keepdim
    stable: Arg | None = None    # sort/argsort: stable=True specifies the order
    permutation: bool = False    # sort/argsort: indices along dim are a permutation


_RED = dict(keepdim=Arg("keepdim", 3, False))
SPECS = {
    "sort": IndexSpec(1, Arg("dim", 1, -1), stable=Arg("stable", None, False), permutation=True),
    "argsort": IndexSpec(0, Arg("dim", 1, -1), stable=Arg("stable", 3, False), permutation=True),
    "topk": IndexSpec(1, Arg("dim", 2, -1)),
    "kthvalue": IndexSpec(1, Arg("dim", 2, -1), **_RED),
    "median": IndexSpec(1, Arg("dim", 1, None), keepdim=Arg("keepdim", 2, False)),
    "nanmedian": IndexSpec(1, Arg("dim", 1, None), keepdim=Arg("keepdim", 2, False)),
    "mode": IndexSpec(1, Arg("dim", 1, -1), keepdim=Arg("keepdim", 2, False)),
    "cummax": IndexSpec(1, Arg("dim", 1, 0)),
    "cummin": IndexSpec(1, Arg("dim", 1, 0)),
}
UNIQUE = ("unique",)  # torch.unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None)


def index_leaf(op_name: str, args: list, kwargs: dict, leaf: int, n_leaves: int) -> IndexSpec | None:
    """The spec if output ``leaf`` is a tie-ambiguous index output of this call, else None."""
    spec = SPECS.get(op_name)
    if spec is None or spec.dim.get(args, kwargs) is None:
        return None
    if spec.stable is not None and spec.stable.get(args, kwargs):
        return None
    return spec if leaf == spec.indices and n_leaves > spec.indices else None


def check_indices(spec: IndexSpec, x: np.ndarray, up: np.ndarray, ours: np.ndarray, args, kwargs):
    """None if ours' indices are as valid as upstream's for input ``x``, else the reason."""
    dim = spec.dim.get(args, kwargs)
    x = x.reshape(1) if x.ndim == 0 else x
    d = int(dim) % x.ndim
    if spec.keepdim is not None and not spec.keepdim.get(args, kwargs) and up.ndim < x.ndim:
        up, ours = np.expand_dims(up, d), np.expand_dims(ours, d)
    up, ours = up.reshape(up.shape or (1,)), ours.reshape(ours.shape or (1,))
    ours = ours.astype(np.int64)
    if ours.size and (ours.min() < 0 or ours.max() >= x.shape[d]):
        return f"index out of range [0, {x.shape[d]})"
    got = np.take_along_axis(x, ours, d)
    want = np.take_along_axis(x, up.astype(np.int64), d)
    if not np.array_equal(got, want, equal_nan=np.issubdtype(x.dtype, np.inexact)):
        bad = int(np.sum(~((got == want) | (np.isnan(got) & np.isnan(want)) if
                           np.issubdtype(x.dtype, np.inexact) else got == want)))
        return f"{bad} indices point at elements that are not ties of upstream's"
    if spec.permutation and ours.size:
        expect = np.arange(x.shape[d]).reshape([-1 if i == d else 1 for i in range(x.ndim)])
        if not np.array_equal(np.sort(ours, axis=d), np.broadcast_to(expect, ours.shape)):
            return "indices along the dim are not a permutation"
    return None


def unique_roles(op_name: str, args: list, kwargs: dict) -> list[str] | None:
    """Output roles of an order-free unique call (values, inverse?, counts?), else None."""
    if op_name not in UNIQUE:
        return None
    if Arg("sorted", 1, True).get(args, kwargs) or Arg("dim", 4, None).get(args, kwargs) is not None:
        return None
    roles = ["values"]
    if Arg("return_inverse", 2, False).get(args, kwargs):
        roles.append("inverse")
    if Arg("return_counts", 3, False).get(args, kwargs):
        roles.append("counts")
    return roles


def check_unique(x: np.ndarray, up: dict[str, np.ndarray], ours: dict[str, np.ndarray]):
    """None if ours is a valid unordered unique of ``x`` with upstream's values and counts."""
    order_u, order_o = np.argsort(up["values"], kind="stable"), np.argsort(ours["values"], kind="stable")
    nan = np.issubdtype(x.dtype, np.inexact)
    if up["values"].shape != ours["values"].shape or not np.array_equal(
            up["values"][order_u], ours["values"][order_o], equal_nan=nan):
        return "different set of unique values"
    if "inverse" in ours and not np.array_equal(
            ours["values"][ours["inverse"].astype(np.int64)], x, equal_nan=nan):
        return "values[inverse] does not reproduce the input"
    if "counts" in ours and not np.array_equal(up["counts"][order_u], ours["counts"][order_o]):
        return "counts differ"
    return None
