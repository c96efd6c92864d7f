"""The harness tests itself: plausible faults injected into ours' results must all be rejected.

Synthetic cases (numpy only, seconds) stand in for upstream; "ours" starts as an exact copy of
upstream's record and each fault mutates it the way a real bug would. The self-test fails if
- an unmodified result, or one within upstream's own precision (1 ulp, another valid tie order,
  a subclass of upstream's exception), is rejected: a comparator is too strict;
- a fault is accepted, or is not flagged by the comparator meant to catch it;
- some registered comparator never rejects anything: it is untested.
With ``cases_dir``, faults are also injected into every real stored case (shape, dtype, last element).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from . import codec, compare, ties
from .tolerance import OpTolerances

ACCEPTED = ("agrees", "errors-as-upstream")
HILBERT = 1.0 / (np.arange(1, 6)[:, None] + np.arange(5)[None, :])  # condition number ~5e5
RHS = np.random.default_rng(1).standard_normal((5, 2))
MM_A = np.random.default_rng(2).standard_normal((6, 40)).astype(np.float32)
MM_B = np.random.default_rng(3).standard_normal((40, 5)).astype(np.float32)


def sequential_mm(a, b):
    """float32 matmul accumulated in another order than numpy's BLAS (a legitimate reimplementation)."""
    out = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for i in range(a.shape[1]):
        out += np.outer(a[:, i], b[i]).astype(np.float32)
    return out


def tensor(arr: np.ndarray, arrays: dict, storage: bool = False) -> dict:
    name = {np.dtype(v): k for k, v in codec.NATIVE.items()}[arr.dtype]
    key = f"a{len(arrays)}"
    arrays[key] = np.ascontiguousarray(arr).reshape(-1) if storage else np.ascontiguousarray(arr)
    stride = [s // arr.itemsize for s in np.ascontiguousarray(arr).strides]
    return {"T": "tensor", "dtype": name, "shape": list(arr.shape), "stride": stride, "offset": 0,
            "storage": storage, "bits": False, "data": key}


def exc(name: str, mro: tuple = ("Exception", "BaseException", "object"), refusal=False) -> dict:
    return {"ok": False, "exc": {"type": name, "mro": [name, *mro], "message": f"synthetic {name}",
                                 "phase": "call", "refusal": refusal}}


class World:
    """Synthetic ops: one case file each, built like generate.py builds real ones."""

    def __init__(self):
        self.ops: dict[str, dict] = {}
        self.arrays: dict[str, np.ndarray] = {}
        rng = np.random.default_rng(0)
        with np.errstate(all="ignore"):
            x = np.array([0, -1, 1, .5, 2, 3, 10, 1e-3, 7.5, .25, 100, 1.5], np.float32).reshape(3, 4)
            self.op("neglog", "UnaryUfuncInfo", [x], -np.log(x), -np.log(x.astype(np.float64)),
                    variants=("function", "inplace"))
        s = (rng.standard_normal((6, 200)) * 10).astype(np.float32)
        self.op("sum", "ReductionOpInfo", [s, 1], s.sum(1), s.astype(np.float64).sum(1))
        a, b = rng.integers(-50, 50, (4, 5)), rng.integers(-50, 50, (4, 5))
        self.op("add", "BinaryUfuncInfo", [a, b], a + b, None)
        self.op("eq", "BinaryUfuncInfo", [a, b % 3 - 1], a == b % 3 - 1, None)
        t = rng.integers(0, 3, (4, 6)).astype(np.float32)
        idx = np.argsort(t, axis=1, kind="stable")
        self.op("sort", "OpInfo", [t, 1], (np.take_along_axis(t, idx, 1), idx), None)
        m = rng.standard_normal((3, 5)).astype(np.float32)
        self.op("max", "OpInfo", [m, 1], (m.max(1), m.argmax(1)), None, key="max.reduction_with_dim")
        self.op("dropout", "OpInfo", [m], m * (rng.random((3, 5)) > .5) * 2, None, random=True)
        self.op("normal_", "OpInfo", [m], rng.standard_normal((4, 5)).astype(np.float32), None, random=True,
                variants=("inplace",))
        z = (rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))).astype(np.complex64)
        self.op("mul", "BinaryUfuncInfo", [z, z], z * z, z.astype(np.complex128) ** 2)
        self.op("div", "BinaryUfuncInfo", [a, b], exc("RuntimeError"), None, kind="error")
        # float64 with its float32 rerun (the "narrow" reference): an ill-conditioned solve
        self.op("solve", "OpInfo", [HILBERT, RHS], np.linalg.solve(HILBERT, RHS), None, dtype="float64",
                narrow=np.linalg.solve(HILBERT.astype(np.float32), RHS.astype(np.float32)))
        # a float32 matmul (its error is not relative to each value) and a wide-range exp
        ma, mb = MM_A, MM_B
        self.op("mm", "OpInfo", [ma, mb], ma @ mb, ma.astype(np.float64) @ mb.astype(np.float64))
        w = np.linspace(-20, 20, 16, dtype=np.float32)
        self.op("exp", "UnaryUfuncInfo", [w], np.exp(w), np.exp(w.astype(np.float64)))
        # upstream disagreeing with itself between runs (the "again" reference)
        g = rng.standard_normal((4, 4)).astype(np.float32)
        self.op("lstsq", "OpInfo", [g], g @ g, None, again=np.nextafter(g @ g, np.float32(np.inf)))

    def op(self, name, family, args, out, high, variants=("function",), key=None, random=False,
           kind="sample", dtype="float32", **refs):
        key = key or name
        arr = lambda v: tensor(v, self.arrays, storage=True) if isinstance(v, np.ndarray) else \
            {"T": "int", "v": v}
        sample = {"id": "s0", "dtype": dtype, "kind": kind, "seed": 0, "args": [arr(v) for v in args],
                  "kwargs": {}, "random": random, "undefined": False, "ref_case": "c0"}
        for slot, ref in dict(refs, high=high).items():
            if ref is not None:
                sample[slot] = [tensor(ref, self.arrays)] if slot == "again" else tensor(ref, self.arrays)
        if isinstance(out, dict):
            up = out
        else:
            vals = [tensor(o, self.arrays) for o in (out if isinstance(out, tuple) else (out,))]
            value = vals[0] if not isinstance(out, tuple) else {"T": "tuple", "v": vals}
            if isinstance(out, tuple) and name == "max":
                value.update(name="max", fields=["values", "indices"])
            up = {"ok": True, "value": value, "alias": ["new"] * len(vals)}
        cases = []
        for i, variant in enumerate(variants):
            res = copy.deepcopy(up)
            if variant == "inplace":
                res["alias"] = ["input0"]
            cases.append({"id": f"c{i}", "sample": "s0", "variant": variant, "fn": f"synthetic.Tensor.{name}",
                          "upstream": res})
        self.ops[key] = {"key": key, "name": name, "family": family, "samples": [sample], "cases": cases}

    def judge(self, key: str, case: int, mutate: Callable | None):
        doc = self.ops[key]
        c = doc["cases"][case]
        ours, arrays = copy.deepcopy(c["upstream"]), {k: v.copy() for k, v in self.arrays.items()}
        if mutate is not None:
            ours = mutate(ours, arrays) or ours
        tol = OpTolerances(doc, self.arrays)
        return compare.judge(compare.Case(doc, doc["samples"][0], c, self.arrays, arrays, tol), ours)


# ---------------------------------------------------------------------------------------------- faults

def leaf(res: dict, i: int | None = None) -> dict:
    return res["value"] if i is None else res["value"]["v"][i]


def on_values(fn, i=None):
    """A mutation applying ``fn`` to the values of output ``i`` (float tensors stay float)."""
    def mutate(res, arrays):
        d = leaf(res, i)
        arrays[d["data"]] = np.asarray(fn(arrays[d["data"]].copy())).astype(arrays[d["data"]].dtype)
    return mutate


def within_sensitivity(a: np.ndarray) -> np.ndarray:
    """A float64 solve's legitimate freedom: 0.9 of the deviation the harness derives from the
    float32 rerun (``compare.spread``), with alternating signs. Another LAPACK algorithm lands
    anywhere in that band, and where depends on the machine's BLAS (an lstsq of the same system
    sat inside it on one machine and outside on another), so the control moves by the band itself."""
    narrow = np.linalg.solve(HILBERT.astype(np.float32), RHS.astype(np.float32)).astype(np.float64)
    band = compare.spread(a, {"narrow": narrow}, "float64")
    return 0.9 * band * np.where(np.arange(a.size).reshape(a.shape) % 2 == 0, 1.0, -1.0)


def set_last(delta):
    def fn(a):
        flat = a.reshape(-1)
        fin = np.flatnonzero(np.isfinite(flat)) if np.issubdtype(a.dtype, np.inexact) else np.arange(flat.size)
        flat[fin[-1]] = delta(flat[fin[-1]])
        return a
    return fn


def put(index, value):
    def fn(a):
        a[index] = value
        return a
    return fn


def scale_finite(factor):
    return lambda a: np.where(np.isfinite(a), a * factor, a)


def retype(name):
    def mutate(res, arrays):
        d = leaf(res)
        arrays[d["data"]] = arrays[d["data"]].astype(codec.NATIVE[name])
        d["dtype"] = name
    return mutate


def reshape(res, arrays):
    """Same values, one extra trailing dimension of size 1."""
    d = leaf(res)
    d["shape"] = list(arrays[d["data"]].shape) + [1]
    arrays[d["data"]] = arrays[d["data"]].reshape(d["shape"])
    d["stride"] = [s // max(1, arrays[d["data"]].itemsize) for s in arrays[d["data"]].strides]


def ulp_up(a):
    return np.where(np.isfinite(a) & (a != 0), np.nextafter(a, np.inf), a).astype(a.dtype)


def swap_ties_reversed(res, arrays):
    """Another valid sort: equal values keep reverse index order (must be accepted)."""
    vals, idx = arrays[leaf(res, 0)["data"]], arrays[leaf(res, 1)["data"]]
    for r in range(idx.shape[0]):
        idx[r] = idx[r][np.lexsort((-idx[r], vals[r]))]


def break_tie(kind):
    def mutate(res, arrays):
        vals, idx = arrays[leaf(res, 0)["data"]], arrays[leaf(res, 1)["data"]]
        row = vals[0]
        if kind == "non-tie":  # point the first slot at an element of a different value
            j = int(np.flatnonzero(row != row[0])[0])
            idx[0, 0] = idx[0, j]
        else:  # duplicate an index within a tie: values still gather right, not a permutation
            j = int(np.flatnonzero(row == row[0])[1])
            idx[0, j] = idx[0, 0]
    return mutate


def refuse(res, arrays):
    return exc("TorchnativeNotImplementedError", ("NotImplementedError", "RuntimeError", "Exception"),
               refusal=True)


@dataclass
class Fault:
    key: str
    what: str
    mutate: Callable
    catches: str | None       # comparator that must flag it (None: must be accepted)
    case: int = 0
    status: str | None = None  # required status instead (refusal)


FAULTS = [
    # controls (besides every case unchanged): these must be accepted
    Fault("neglog", "1 ulp off everywhere (within upstream's precision)", on_values(ulp_up), None),
    Fault("sum", "1 ulp off everywhere", on_values(ulp_up), None),
    Fault("sort", "another valid order of ties", swap_ties_reversed, None),
    Fault("solve", "float64 moved by most of its measured sensitivity, alternating in sign",
          on_values(lambda a: a + within_sensitivity(a)), None),
    Fault("solve", "float64 value slightly off (0.1%)", on_values(lambda a: a * 1.001), "close"),
    Fault("solve", "float64 last element off by 1e-6", on_values(set_last(lambda v: v * (1 + 1e-6))), "close"),
    Fault("lstsq", "beyond upstream's run-to-run spread (0.1%)", on_values(lambda a: a * 1.001), "close"),
    Fault("lstsq", "upstream's own second run", lambda r, a: a.__setitem__(
        leaf(r)["data"], np.nextafter(a[leaf(r)["data"]], np.float32(np.inf))), None),
    Fault("mm", "another accumulation order", on_values(lambda a: sequential_mm(MM_A, MM_B)), None),
    Fault("mm", "one element off by 0.1%", on_values(lambda a: a * np.where(
        np.arange(a.size).reshape(a.shape) == 13, 1.001, 1)), "close"),
    Fault("exp", "smallest element off by 1%", on_values(lambda a: np.where(a == a.min(), a * 1.01, a)),
          "close"),
    Fault("div", "raises a subclass of upstream's exception", lambda r, a: exc("_LinAlgError", (
        "RuntimeError", "Exception", "BaseException", "object")), None),
    # faults: each must be rejected by the named comparator
    Fault("neglog", "value slightly off (0.1%)", on_values(scale_finite(1.001)), "close"),
    Fault("sum", "value slightly off (0.1%)", on_values(lambda a: a * 1.001), "close"),
    Fault("sum", "value off by 10x the derived tolerance", None, "close"),
    Fault("neglog", "only the last element wrong (1%)", on_values(set_last(lambda v: v * 1.01)), "close"),
    Fault("add", "only the last element wrong (+1)", on_values(set_last(lambda v: v + 1)), "exact"),
    Fault("eq", "only the last element wrong (flipped)", on_values(set_last(lambda v: not v)), "exact"),
    Fault("max.reduction_with_dim", "last index wrong", on_values(set_last(lambda v: (v + 1) % 5), 1),
          "exact"),
    Fault("sort", "last sorted value wrong", on_values(set_last(lambda v: v + 0.5), 0), "close"),
    Fault("neglog", "wrong shape", reshape, "shape"),
    Fault("add", "wrong shape", reshape, "shape"),
    Fault("neglog", "wrong dtype (float64)", retype("float64"), "dtype"),
    Fault("add", "wrong dtype (int32)", retype("int32"), "dtype"),
    Fault("sum", "permuted elements", on_values(lambda a: a[::-1]), "close"),
    Fault("add", "permuted elements", on_values(lambda a: a[::-1, ::-1]), "exact"),
    Fault("sum", "constant output", on_values(lambda a: np.full_like(a, a.mean())), "close"),
    Fault("add", "constant output", on_values(lambda a: np.full_like(a, int(a.mean()))), "exact"),
    Fault("mul", "imaginary part off 0.1%", on_values(lambda a: a.real + 1.001j * a.imag), "close"),
    Fault("neglog", "NaN where upstream is finite", on_values(put((1, 0), np.nan)),
          "nonfinite"),
    Fault("neglog", "+inf turned into -inf", on_values(lambda a: np.where(np.isposinf(a), -np.inf, a)),
          "nonfinite"),
    Fault("neglog", "-0 turned into +0", on_values(lambda a: np.where(a == 0, 0.0, a)), "signed_zero"),
    Fault("neglog", "in-place returns a copy", lambda r, a: r.update(alias=["new"]), "alias", case=1),
    Fault("dropout", "1 ulp off under the same seed", on_values(set_last(lambda v: np.nextafter(
        v, np.float32(np.inf)))), "seeded"),
    Fault("normal_", "1 ulp off under the same seed", on_values(set_last(lambda v: np.nextafter(
        v, np.float32(np.inf)))), "seeded"),
    Fault("sort", "index of a non-tie", break_tie("non-tie"), "tie"),
    Fault("sort", "duplicated index (not a permutation)", break_tie("dup"), "tie"),
    Fault("max.reduction_with_dim", "one output missing", lambda r, a: r["value"].update(
        v=r["value"]["v"][:1]), "structure"),
    Fault("neglog", "Python float instead of a tensor", lambda r, a: r.update(
        value={"T": "float", "v": 1.0}), "structure"),
    Fault("div", "computed where upstream raised", lambda r, a: {"ok": True, "value": {"T": "none"},
                                                                  "alias": []}, "outcome"),
    Fault("neglog", "raised where upstream computed", lambda r, a: exc("RuntimeError"), "outcome"),
    Fault("div", "wrong exception type", lambda r, a: exc("TypeError"), "exception"),
    Fault("neglog", "a refusal is not agreement", refuse, None, status="refuses"),
]


def _tol_fault(world: World) -> Callable:
    """10x the derived tolerance of 'sum', applied to every element."""
    doc = world.ops["sum"]
    tol = OpTolerances(doc, world.arrays)("float32")
    return on_values(lambda a: a + np.sign(a) * 10 * (tol.atol + tol.rtol * np.abs(a)))


def run(cases_dir: Path | None = None) -> list[str]:
    """All problems found (empty list: the harness passed its own test)."""
    world, problems, exercised = World(), [], set()
    for key, doc in world.ops.items():  # every synthetic case, unchanged, is upstream agreeing with itself
        for i in range(len(doc["cases"])):
            v = world.judge(key, i, None)
            if v.status not in ACCEPTED:
                problems.append(f"control rejected: {key} case {i} unchanged: {v.failures}")
    for f in FAULTS:
        mutate = f.mutate if f.mutate is not None else _tol_fault(world)
        v = world.judge(f.key, f.case, mutate)
        exercised.update(v.failures)
        label = f"{f.key}: {f.what}"
        if f.status is not None:
            if v.status != f.status:
                problems.append(f"{label}: status {v.status}, expected {f.status}")
        elif f.catches is None:
            if v.status not in ACCEPTED:
                problems.append(f"control rejected: {label}: {v.failures}")
        elif v.status in ACCEPTED:
            problems.append(f"fault accepted: {label} (meant for '{f.catches}')")
        elif f.catches not in v.failures:
            problems.append(f"fault not flagged by '{f.catches}': {label} (flagged by {sorted(v.failures)})")
    for name in compare.COMPARATORS:
        if name not in exercised:
            problems.append(f"comparator never exercised: {name}")
    if cases_dir is not None:
        problems += real_cases(cases_dir)
    return problems


def real_cases(cases_dir: Path) -> list[str]:
    """Upstream against itself must agree; shape, dtype and last-element faults must not."""
    problems = []
    for path in sorted(Path(cases_dir).glob("*.json")):
        if path.name.startswith("_"):
            continue
        doc = json.loads(path.read_text())
        with np.load(path.with_suffix(".npz")) as z:
            arrays = {k: z[k] for k in z.files}
        tol, samples = OpTolerances(doc, arrays), {s["id"]: s for s in doc["samples"]}
        for c in doc["cases"]:
            up, s = c["upstream"], samples[c["sample"]]
            for what, mutate in _real_faults(up, arrays, s, doc["name"]):
                ours, mine = copy.deepcopy(up), {k: v.copy() for k, v in arrays.items()}
                ours = (mutate(ours, mine) or ours) if mutate else ours
                v = compare.judge(compare.Case(doc, s, c, arrays, mine, tol), ours)
                if (mutate is None) != (v.status in ACCEPTED):
                    problems.append(f"{doc['key']} {c['id']} {what}: {v.status} {v.failures}")
    return problems


def _real_faults(up, arrays, sample, name):
    yield "unchanged", None
    if not up.get("ok") or up["value"]["T"] != "tensor" or sample.get("undefined"):
        return
    d = up["value"]
    if not d["shape"] or 0 in d["shape"]:
        return
    yield "wrong shape", reshape
    if name in ties.SPECS or d.get("bits"):
        return
    yield "wrong dtype", retype("float64" if d["dtype"] != "float64" else "float32")
    if d["dtype"] == "bool":
        yield "last element wrong", on_values(set_last(lambda v: not v))
    elif codec.is_float_name(d["dtype"]):
        if np.isfinite(arrays[d["data"]]).any():
            yield "last element wrong", on_values(set_last(lambda v: v + 1 + abs(v)))
    else:
        yield "last element wrong", on_values(set_last(lambda v: v + 1))
