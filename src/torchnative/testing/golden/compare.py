"""Comparators, and ``judge``: the verdict on one case from upstream's and ours' records.

Every comparator is registered by name with what it accepts and why, returns None to accept or a
message to reject, and is called only through ``COMPARATORS`` so the self-test can swap one for an
accept-everything stand-in and prove it would notice. Nothing here imports torch: comparison runs in
its own process, after both interpreters are done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from . import codec, ties
from .tolerance import Tol, derive, real_view

COMPARATORS: dict[str, Callable] = {}
WHY: dict[str, str] = {}
UFUNC_FAMILIES = ("UnaryUfuncInfo", "BinaryUfuncInfo")


def comparator(why: str):
    def register(fn):
        COMPARATORS[fn.__name__], WHY[fn.__name__] = fn, why
        return fn
    return register


@comparator("raised-vs-computed must match: computing where upstream raises is a defect, not a bonus")
def outcome(up: dict, ours: dict):
    if up["ok"] == ours["ok"]:
        return None
    if up["ok"]:
        e = ours["exc"]
        return f"raised {e['type']} ({e['phase']}): {e['message'][:160]} where upstream computed"
    return f"computed where upstream raised {up['exc']['type']}"


@comparator("ours must raise upstream's exception type or a subclass of it (what `except` catches)")
def exception(up_exc: dict | None, ours_exc: dict | None):
    if up_exc is None or ours_exc is None:
        return "only one side raised"
    if up_exc["type"] in ours_exc["mro"]:
        return None
    return f"raised {ours_exc['type']}, upstream raised {up_exc['type']}"


@comparator("same kind of result (tensor, Python scalar, tuple, None), length and named-tuple fields")
def structure(u: dict, o: dict):
    if u["T"] != o["T"]:
        return f"{o['T']} where upstream returned {u['T']}"
    if u["T"] in ("list", "tuple") and len(u["v"]) != len(o["v"]):
        return f"{len(o['v'])} items where upstream returned {len(u['v'])}"
    if u.get("fields") != o.get("fields"):  # named-tuple fields (.values, .indices) are API; the type name is not
        return f"fields {o.get('fields')} where upstream returned {u.get('name')}{u.get('fields')}"
    if u["T"] == "dict" and u["v"].keys() != o["v"].keys():
        return f"keys {sorted(o['v'])} where upstream has {sorted(u['v'])}"
    return None


@comparator("dtype exactly: type promotion is part of the result")
def dtype(u: dict, o: dict):
    return None if u["dtype"] == o["dtype"] else f"dtype {o['dtype']}, upstream {u['dtype']}"


@comparator("shape exactly")
def shape(u: dict, o: dict):
    return None if u["shape"] == o["shape"] else f"shape {o['shape']}, upstream {u['shape']}"


@comparator("in-place and out= results are the very tensor passed in; views alias an input, copies do not")
def alias(u_tags: list, o_tags: list):
    return None if u_tags == o_tags else f"aliasing {o_tags}, upstream {u_tags}"


@comparator("NaN, +inf and -inf at exactly upstream's positions")
def nonfinite(u: np.ndarray, o: np.ndarray):
    for name, test in (("NaN", np.isnan), ("+inf", np.isposinf), ("-inf", np.isneginf)):
        bad = test(u) != test(o)
        if bad.any():
            return f"{name} differs at {int(bad.sum())} positions (first at flat {int(np.argmax(bad.ravel()))})"
    return None


@comparator("sign of zero, where IEEE fixes it: elementwise ops, and ops that only move values")
def signed_zero(u: np.ndarray, o: np.ndarray):
    both = (u == 0) & (o == 0)
    bad = both & (np.signbit(u) != np.signbit(o))
    return f"sign of zero differs at {int(bad.sum())} positions" if bad.any() else None


@comparator("integers, booleans and non-numeric results exactly")
def exact(u, o):
    if isinstance(u, dict):
        return None if u == o else f"{o} where upstream {u}"
    if u.shape != o.shape:
        return f"shape {o.shape} vs {u.shape}"
    bad = u != o
    if not bad.any():
        return None
    first = int(np.argmax(bad.ravel()))
    return f"{int(bad.sum())}/{bad.size} elements differ (first at flat {first}: {o.ravel()[first]} vs {u.ravel()[first]})"


@comparator("finite floats: within the derived tolerance of upstream, or no farther from upstream's "
            "float64 rerun than upstream itself is (at that element, or within its worst absolute and "
            "relative error on this output), or within upstream's own measured spread (run to run; "
            "across this machine's CPU profiles; float64's scaled sensitivity)")
def close(u: np.ndarray, o: np.ndarray, high: np.ndarray | None, spread: float, tol: Tol):
    if u.shape != o.shape:
        return f"not comparable: {o.shape} vs {u.shape}"
    fin = np.isfinite(u) & np.isfinite(o)  # non-finite positions are the 'nonfinite' comparator's
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(o - u)
        slack = tol.normwise * float(np.max(np.abs(u), where=np.isfinite(u), initial=0.0))
        ok = diff <= tol.atol + tol.rtol * np.abs(u) + max(slack, spread)
        if high is not None and high.shape == u.shape:
            own, err = np.abs(u - high), np.abs(o - high)  # upstream's and ours' error, per element
            ok |= err <= own + tol.atol + tol.rtol * np.abs(high)
            # or within upstream's worst error on this output, absolute and relative at once (an
            # accumulation order differing from upstream's lands here; a wrong element does not)
            fin_own = np.isfinite(own) & (np.abs(high) > 0)
            worst_abs = float(np.max(own, where=fin_own, initial=0.0))
            worst_rel = float(np.max(own / np.where(fin_own, np.abs(high), 1.0), where=fin_own, initial=0.0))
            ok |= (err <= worst_abs) & (err <= worst_rel * np.abs(high))
    bad = fin & ~ok
    if not bad.any():
        return None
    first = int(np.argmax(bad.ravel()))
    return (f"{int(bad.sum())}/{bad.size} elements off (max |diff| {float(diff[bad].max()):.3g}, "
            f"rtol {tol.rtol:.3g}, atol {tol.atol:.3g}; first at flat {first}: "
            f"{o.ravel()[first]!r} vs {u.ravel()[first]!r})")


def elementwise(ours, low, high, dtype: str = "float32", summed: bool = False,
                others=()) -> str | None:
    """The harness's verdict on one floating output judged outside the pipeline (a test's own
    program run on both sides): NaN and infinities exactly where upstream's (``low``) are, then
    ``close`` with the tolerance derived from this output's own error against upstream's float64
    rerun (``high``). Complex values are judged part by part. None when ours agrees.

    ``summed``: the output's elements are sums whose terms cancel (gradients through matmuls and
    reductions, parameters after optimizer steps), so an element's rounding error scales with the
    terms it was summed from, not with its own value: upstream's largest error on the output is
    ``close``'s spread, as the harness takes upstream's measured moves (docs/testing.md).

    ``others``: upstream's own results for the same output under this machine's other CPU
    profiles (``upstream.other_cpu_profiles``); how far they move from ``low`` (the largest move
    of any profile, at the output's largest element, as ``spread`` takes it) is upstream
    disagreeing with itself across CPUs, and widens the spread by as much."""
    o, u, h = (real_view(np.asarray(a)) for a in (ours, low, high))
    if o.shape != u.shape or h.shape != u.shape:
        return f"shape {o.shape} vs upstream {u.shape} (float64 rerun {h.shape})"
    spread = 0.0
    with np.errstate(invalid="ignore"):
        if summed:
            err = np.abs(u - h)
            spread = float(np.max(err, where=np.isfinite(err), initial=0.0))
        moves = [np.abs(u - real_view(np.asarray(other))) for other in others]
        spread += max((float(np.max(m, where=np.isfinite(m), initial=0.0)) for m in moves), default=0.0)
    return nonfinite(u, o) or close(u, o, h, spread, derive([(u, h)], dtype))


@comparator("random ops under the same seed reproduce upstream's bits at the CPU capability in force "
            "(ours' random engine is bit-exact per capability: "
            "tests/differential/test_random_engine.py, docs/cpu.md)")
def seeded(u: np.ndarray, o: np.ndarray):
    fin = np.isfinite(u) & np.isfinite(o)
    bad = fin & (o != u)
    return f"{int(bad.sum())} elements differ under the same seed" if bad.any() else None


@comparator("where the op leaves an output unspecified (ties, unordered unique), any valid one: see ties.py")
def tie(check: Callable[[], str | None]):
    return check()


# ---------------------------------------------------------------------------------------------- judge

@dataclass
class Verdict:
    status: str = "agrees"
    failures: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def check(self, name: str, *args) -> bool:
        msg = COMPARATORS[name](*args)
        if msg is not None:
            self.failures.setdefault(name, msg)
        return msg is None


@dataclass
class Case:
    """Everything ``judge`` needs about one case (both sides' arrays are plain dicts of numpy)."""
    op: dict
    sample: dict
    case: dict
    up_arrays: dict
    ours_arrays: dict
    tol: Callable[[str], Tol]
    others: list = field(default_factory=list)  # upstream's values under other CPU profiles


def other_results(others: list[tuple[dict, dict]], case_id: str) -> list[tuple[dict, dict]]:
    """(value, arrays) of each other CPU profile's result for one case, where it computed."""
    found = []
    for record, arrays in others:
        r = record.get("results", {}).get(case_id)
        if r is not None and r.get("ok"):
            found.append((r["value"], arrays))
    return found


def _prefixed(d, prefix: str):
    if isinstance(d, dict):
        return {k: (prefix + v if k == "data" and isinstance(v, str) else _prefixed(v, prefix))
                for k, v in d.items()}
    if isinstance(d, list):
        return [_prefixed(x, prefix) for x in d]
    return d


def judge(c: Case, ours: dict | None) -> Verdict:
    up, v = c.case["upstream"], Verdict()
    if ours is None:
        v.failures["outcome"] = "no result (worker crashed or timed out)"
    elif not ours["ok"] and ours["exc"].get("refusal"):
        v.status = "refuses"
        v.notes.append(ours["exc"]["message"][:200])
        return v
    elif v.check("outcome", up, ours):
        try:
            if up["ok"] and ours["ok"]:
                if "alias" in up:
                    v.check("alias", up["alias"], ours.get("alias"))
                refs = {k: c.sample[k] for k in ("high", "narrow") if c.sample.get(k) is not None}
                refs.update({f"again{i}": r for i, r in enumerate(c.sample.get("again") or [])})
                if c.others:  # their arrays join upstream's under a prefix of their own
                    c.up_arrays = dict(c.up_arrays)
                    for i, (value, arrays) in enumerate(c.others):
                        c.up_arrays.update({f"other{i}:{k}": a for k, a in arrays.items()})
                        refs[f"other{i}"] = _prefixed(value, f"other{i}:")
                _Walk(c, v).node(up["value"], ours["value"], refs, 0, ())
            elif v.check("exception", up.get("exc"), ours.get("exc")):
                v.status = "errors-as-upstream"
        except Exception as exc:  # results the comparators cannot even read are not agreement
            v.failures.setdefault("harness", f"comparison failed: {type(exc).__name__}: {exc}")
    if v.failures:
        v.status = "diverges"
    return v


def values(desc: dict, arrays: dict) -> np.ndarray:
    return codec.to_numpy_values(desc, arrays[desc["data"]])


def plain(desc: dict, arrays: dict):
    """A stored argument as plain Python/numpy (for reading dim=, keepdim=, the input values)."""
    kind = desc["T"]
    if kind == "tensor":
        return values(desc, arrays)
    if kind in ("list", "tuple"):
        return [plain(x, arrays) for x in desc["v"]]
    if kind == "dict":
        return {k: plain(x, arrays) for k, x in desc["v"].items()}
    return desc.get("v")


class _Walk:
    """Walks upstream's and ours' result trees in parallel, checking each node."""

    def __init__(self, c: Case, v: Verdict):
        self.c, self.v = c, v
        s = c.sample
        self.args = [plain(a, c.up_arrays) for a in s["args"]]
        self.kwargs = {k: plain(x, c.up_arrays) for k, x in s["kwargs"].items()}
        self.unique = ties.unique_roles(c.op["name"], self.args, self.kwargs)

    def node(self, u, o, refs, depth, pos):
        if not self.v.check("structure", u, o):
            return
        if depth == 0 and self.unique:
            return self.unique_result(u, o)
        refs = {k: r for k, r in refs.items() if r.get("T") == u["T"]}
        if u["T"] in ("list", "tuple"):
            for i, (a, b) in enumerate(zip(u["v"], o["v"])):
                sub = {k: r["v"][i] for k, r in refs.items() if len(r["v"]) == len(u["v"])}
                self.node(a, b, sub, depth + 1, pos + (i,) if depth == 0 else pos)
        elif u["T"] == "dict":
            for k in u["v"]:
                self.node(u["v"][k], o["v"][k], {}, depth + 1, pos)
        elif u["T"] == "tensor":
            self.tensor(u, o, refs, pos[0] if pos else 0, depth)
        elif u["T"] in ("float", "complex"):
            as_arr = lambda d: np.array(complex(d["re"], d["im"]) if d["T"] == "complex" else d["v"])
            dt = self.c.sample["dtype"] if codec.is_float_name(self.c.sample["dtype"]) else "float64"
            self.floats(as_arr(u), as_arr(o), {k: as_arr(r) for k, r in refs.items()}, dt, elementwise=False)
        else:
            self.v.check("exact", u, o)

    def tensor(self, u, o, refs, leaf, depth):
        self.v.check("dtype", u, o)
        if not self.v.check("shape", u, o):
            return
        uv, ov = values(u, self.c.up_arrays), values(o, self.c.ours_arrays)
        if self.c.sample.get("undefined"):
            self.v.notes.append("values not compared: upstream's are undefined (uninitialized memory)")
            return
        top = self.c.case["upstream"]["value"]
        n_top = len(top["v"]) if top["T"] in ("list", "tuple") else 1
        spec = ties.index_leaf(self.c.op["name"], self.args, self.kwargs, leaf, n_top) if depth <= 1 else None
        if spec is not None:
            x = self.args[0]
            self.v.check("tie", lambda: ties.check_indices(spec, x, uv, ov, self.args, self.kwargs))
            return
        if not codec.is_float_name(u["dtype"]):
            self.v.check("exact", uv, ov)
            return
        rv = {k: values(r, self.c.up_arrays) for k, r in refs.items() if r.get("shape") == u["shape"]}
        self.floats(uv, ov, rv, u["dtype"], elementwise=self.zero_sign_matters(u, uv))

    def floats(self, uv, ov, refs: dict, dt, elementwise):
        ur, orr = real_view(uv), real_view(np.asarray(ov))
        if ur.shape != orr.shape:
            self.v.failures.setdefault("close", f"not comparable: {orr.shape} vs {ur.shape}")
            return
        self.v.check("nonfinite", ur, orr)
        if elementwise:
            self.v.check("signed_zero", ur, orr)
        if self.c.sample.get("random"):
            self.v.check("seeded", ur, orr)
            return
        refs = {k: real_view(r) for k, r in refs.items() if real_view(r).shape == ur.shape}
        self.v.check("close", ur, orr, refs.get("high"), spread(ur, refs, dt), self.c.tol(dt))

    def zero_sign_matters(self, u: dict, uv: np.ndarray) -> bool:
        """Elementwise ops (IEEE fixes each zero's sign), or the output only holds input values."""
        if self.c.op.get("family") in UFUNC_FAMILIES:
            return True
        same = [d for d in _tensor_descs(self.c.sample) if d["dtype"] == u["dtype"]]
        if not same or uv.size == 0:
            return False
        width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.uint64}[uv.dtype.itemsize]
        seen = np.concatenate([values(d, self.c.up_arrays).ravel().view(width) for d in same])
        return bool(np.isin(uv.ravel().view(width), seen).all())

    def unique_result(self, u, o):
        leaves_u = u["v"] if u["T"] in ("list", "tuple") else [u]
        leaves_o = o["v"] if o["T"] in ("list", "tuple") else [o]
        if len(self.unique) != len(leaves_u) or any(d["T"] != "tensor" for d in leaves_u + leaves_o):
            self.v.check("exact", u, o)
            return
        for a, b in zip(leaves_u, leaves_o):
            self.v.check("dtype", a, b)
        if all([self.v.check("shape", a, b) for a, b in zip(leaves_u, leaves_o)]):
            uv = {r: values(d, self.c.up_arrays) for r, d in zip(self.unique, leaves_u)}
            ov = {r: values(d, self.c.ours_arrays) for r, d in zip(self.unique, leaves_o)}
            x = self.args[0]
            self.v.check("tie", lambda: ties.check_unique(x, uv, ov))


def spread(u: np.ndarray, refs: dict, dt: str) -> float:
    """How far upstream's own values are known to move on this output (largest element): between its
    runs ("again*"), between the CPU profiles this machine can run ("other*": ATen's capabilities,
    MKL's and oneDNN's code paths; three summation orders can coincide at one element while the
    third differs, so the allowance is the output's largest move, as for reruns), or twice
    float64's error as scaled from its float32 rerun ("narrow": ours and upstream may each sit that
    far from the truth, on opposite sides)."""
    parts = [0.0]
    with np.errstate(invalid="ignore", over="ignore"):
        deviations = [np.abs(r - u) for k, r in refs.items() if k.startswith(("again", "other"))]
        if "narrow" in refs:
            ratio = codec.finfo(dt)[0] / codec.finfo(codec.NARROW.get(dt, dt))[0]
            deviations.append(2 * ratio * np.abs(refs["narrow"] - u))
    for d in deviations:
        parts.append(float(np.max(d, where=np.isfinite(d), initial=0.0)))
    return max(parts)


def _tensor_descs(sample: dict):
    stack = list(sample["args"]) + list(sample["kwargs"].values())
    while stack:
        d = stack.pop()
        if d["T"] == "tensor":
            yield d
        elif d["T"] in ("list", "tuple"):
            stack.extend(d["v"])
