"""Worker, run under upstream torch: OpInfo samples -> stored cases with upstream's results.

    python -m golden.generate --out DIR --dtypes float32,int64 [--max-samples N] [--ops add,sum | KEY ...]

For each selected OpInfo entry and dtype (fixed seed), every sample is serialized, rebuilt from its
own serialization and called through each nameable spelling (function, method, in-place, operator,
out=). The first spelling that computes is probed, and its reruns stored with the sample:
- "random": the call drew from the default generator (compared bit for bit under the same seed);
- "again": reruns with the same seed that gave other values (upstream disagrees with itself, e.g.
  MKL's gelsy): once any sample of an entry shows it, every sample is rerun NONDETERMINISTIC_RERUNS
  times and the spread of those runs is accepted;
- "high": the call with floating inputs widened to float64 (the reference tolerances derive from);
- "narrow": for float64, the call with inputs narrowed to float32 (its sensitivity, scaled in ulps).
torch.empty-like entries are "undefined" (uninitialized memory). OpInfo error_inputs become cases
that must raise. One JSON + one NPZ per entry.

Every sample is attempted (``--max-samples 0``, the default). A sample the codec cannot carry
(non-tensor objects, inputs over MAX_SAMPLE_BYTES) and every sample of an entry with no nameable
callable are "regen" samples: stored as a digest of the inputs plus the generator's seed and
index, and each worker regenerates them from OpInfo (live.py); OpInfo's own callables are then
the spellings ("opinfo:op", ...).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

from . import calls, codec, live, naming

# Dtype preference when an op supports more than the cap allows: primary first.
PRIORITY = ("float32", "float64", "int64", "bool", "float16", "bfloat16", "int32", "complex64",
            "uint8", "int8", "int16", "complex128")
MAX_SAMPLE_BYTES = 16 << 20  # inputs over this are regenerated, not stored
MAX_RESULT_BYTES = 256 << 20  # a sample whose results store more is skipped and counted
NONDETERMINISTIC_RERUNS = 8
SPELLINGS = (("function", "op"), ("method", "method_variant"), ("inplace", "inplace_variant"),
             ("operator", "operator_variant"), ("inplace_operator", "inplace_operator_variant"))


def op_key(op) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def select_ops(op_db, names: list[str] | None):
    if not names:
        return list(op_db)
    wanted = set(names)
    chosen = [op for op in op_db if op.name in wanted or op_key(op) in wanted]
    missing = wanted - {op.name for op in chosen} - {op_key(op) for op in chosen}
    if missing:
        raise SystemExit(f"unknown OpInfo names: {sorted(missing)}")
    return chosen


def pick_dtypes(op, wanted: list[str] | None, cap: int) -> list[str]:
    supported = {codec.dtype_name(d) for d in op.supported_dtypes("cpu")}
    order = list(wanted) if wanted else list(PRIORITY) + sorted(supported - set(PRIORITY))
    return [d for d in order if d in supported and (d in codec.NATIVE or d in codec.BITS)][:cap]


def spellings(op, rev, torch) -> tuple[list[tuple[str, str]], dict[str, int]]:
    """Named spellings; an entry with none is called through OpInfo's own callables (live.OPINFO)."""
    found, unnamed, own = [], {}, []
    for kind, attr in SPELLINGS:
        fn = getattr(op, attr, None)
        if fn is None:
            continue
        name = naming.qualified_name(fn, rev, torch)
        if name is None:
            unnamed[kind] = unnamed.get(kind, 0) + 1
            if not any(getattr(op, a) is fn for _, a in own):
                own.append((kind, attr))
        elif name not in [n for _, n in found]:
            found.append((kind, name))
    return found or [(kind, live.OPINFO + attr) for kind, attr in own], unnamed


def spread(items: list, cap: int) -> list[tuple[int, object]]:
    """At most ``cap`` items, evenly spaced, so a capped op keeps its variety (with their indices)."""
    idx = range(len(items)) if not cap or len(items) <= cap else np.linspace(0, len(items) - 1, cap).round().astype(int)
    return [(int(i), items[int(i)]) for i in idx]


def same_values(a: dict, b: dict, arrays: dict) -> bool:
    """Bitwise equality of two encoded results (NaN payloads included)."""
    if a.get("ok") != b.get("ok"):
        return False
    if not a.get("ok"):
        return True
    return _same(a["value"], b["value"], arrays)


def _same(x, y, arrays):
    if x.get("T") != y.get("T"):
        return False
    if x["T"] == "tensor":
        ax, ay = arrays[x["data"]], arrays[y["data"]]
        return ax.shape == ay.shape and ax.dtype == ay.dtype and ax.tobytes() == ay.tobytes()
    if x["T"] in ("list", "tuple"):
        return len(x["v"]) == len(y["v"]) and all(_same(p, q, arrays) for p, q in zip(x["v"], y["v"]))
    if x["T"] == "dict":
        return x["v"].keys() == y["v"].keys() and all(_same(x["v"][k], y["v"][k], arrays) for k in x["v"])
    return json.dumps(x, sort_keys=True) == json.dumps(y, sort_keys=True)


def out_descriptor(value: dict):
    """Pre-allocated out= argument matching upstream's result (tensor or tuple of tensors), or None."""
    if value["T"] == "tensor":
        return {"T": "empty", "shape": value["shape"], "dtype": value["dtype"]}
    if value["T"] == "tuple" and value["v"] and all(v["T"] == "tensor" for v in value["v"]):
        return {"T": "tuple", "v": [out_descriptor(v) for v in value["v"]]}
    return None


class OpCases:
    """Builds the case file of one OpInfo entry."""

    def __init__(self, op, torch, rev, seed, timeout):
        self.op, self.torch, self.seed, self.timeout = op, torch, seed, timeout
        self.key = op_key(op)
        self.nondeterministic = False
        self.store = codec.Store("a")
        self.spellings, unnamed = spellings(op, rev, torch)
        self.live: dict[str, object] = {}  # sample id -> the live OpInfo sample, for regen samples
        self.doc = {"key": self.key, "name": op.name, "variant_test_name": op.variant_test_name,
                    "family": type(op).__name__, "spellings": [n for _, n in self.spellings],
                    "unnamed_spellings": unnamed, "totals": {}, "skipped": {}, "samples": [], "cases": []}

    def skip(self, why: str, n: int = 1):
        self.doc["skipped"][why] = self.doc["skipped"].get(why, 0) + n

    def call(self, fn, variant, sample, out=None, cast=None, probe_rng=False):
        c = {"fn": fn, "variant": variant, "args": sample["args"], "kwargs": sample["kwargs"]}
        if out is not None:
            c["out"] = out
        s = self.live.get(sample["id"])
        return calls.run_call(c, self.store.arrays, self.torch, self.store, seed=sample["seed"], cast=cast,
                              timeout=self.timeout, probe_rng=probe_rng,
                              live_args=None if s is None else live.parts(s),
                              fn=getattr(self.op, fn[len(live.OPINFO):]) if fn.startswith(live.OPINFO) else None)

    def encode_inputs(self, s) -> tuple[list, dict, str | None]:
        """Stored descriptors of sample ``s``, or lenient ones and why it must be regenerated on
        each side instead (live.py)."""
        args, kwargs = live.parts(s)
        why = None
        if self.spellings and self.spellings[0][1].startswith(live.OPINFO):
            why = "no nameable spelling"
        elif sum(t.numel() * t.element_size() for t in _tensors((args, kwargs), self.torch)) > MAX_SAMPLE_BYTES:
            why = f"inputs over {MAX_SAMPLE_BYTES >> 20} MB"
        else:
            mark = len(self.store.arrays)
            try:
                return ([codec.encode(a, self.store, self.torch, storage=True) for a in args],
                        {k: codec.encode(v, self.store, self.torch, storage=True) for k, v in kwargs.items()}, None)
            except codec.Unserializable as exc:
                why = f"unserializable input: {exc}"
                for k in list(self.store.arrays)[mark:]:
                    del self.store.arrays[k]
        # described for the comparators only; each worker calls its own regenerated sample
        return ([codec.encode_lenient(a, self.store, self.torch, 1 << 20) for a in args],
                {k: codec.encode_lenient(v, self.store, self.torch, 1 << 20) for k, v in kwargs.items()}, why)

    def add_sample(self, dtype, index, s, kind="sample", gen_seed=None):
        sid = f"s{len(self.doc['samples'])}"
        seed = self.seed + zlib.crc32(f"{self.key}|{dtype}|{kind}|{index}".encode()) % (2 ** 31)
        args, kwargs, why = self.encode_inputs(s)
        sample = {"id": sid, "dtype": dtype, "index": index, "kind": kind, "seed": seed, "args": args,
                  "kwargs": kwargs, "random": False,
                  # torch.empty and friends return uninitialized memory: only shape/dtype are defined
                  "undefined": "empty" in self.op.name}
        if why is not None:
            sample.update(regen=why, gen_seed=gen_seed, digest=live.digest(s, self.torch))
            self.live[sid] = s
        self.doc["samples"].append(sample)
        return sample

    def add_case(self, sample, kind, fn, res, out=None, expected=None):
        case = {"id": f"c{len(self.doc['cases'])}", "sample": sample["id"], "variant": kind, "fn": fn,
                "upstream": res}
        if out is not None:
            case["out"] = out
        if expected is not None:
            case["expected_exc"] = expected
        self.doc["cases"].append(case)
        return case

    def run_sample(self, sample):
        probed = False
        for kind, fn in self.spellings:
            if kind in ("operator", "inplace_operator") and sample["kwargs"]:
                self.skip("operator spelling with keyword arguments")  # operators take no keywords
                continue
            res = self.call(fn, kind, sample, probe_rng=not probed)
            case = self.add_case(sample, kind, fn, res)
            if res["ok"] and not probed:
                probed = True
                self.probe(sample, case, kind, fn)
            if kind == "function" and res["ok"] and self.op.supports_out and fn.startswith("torch.") \
                    and not fn.startswith("torch.Tensor.") and "out" not in sample["kwargs"]:
                out = out_descriptor(res["value"])
                if out is not None:
                    self.add_case(sample, "out", fn, self.call(fn, "out", sample, out=out), out=out)

    def probe(self, sample, case, kind, fn):
        """Reruns of the first call that computed, stored with the sample as references (see module doc)."""
        first = case["upstream"]
        sample["ref_case"] = case["id"]
        sample["random"] = bool(first.pop("rng_advanced", False))
        if sample["undefined"]:
            return
        if self.rerun(sample, first, fn, kind, 1):
            self.nondeterministic = True
        for table, slot in ((codec.UPCAST, "high"), (codec.NARROW, "narrow")):
            if sample["dtype"] in table and not sample["random"]:
                rerun = self.call(fn, kind, sample, cast=table)
                if rerun["ok"]:
                    sample[slot] = rerun["value"]

    def build(self, dtypes, max_samples):
        torch = self.torch
        for dtype in dtypes:
            gen_seed = live.seed_of(self.seed, self.key, dtype)
            try:
                samples = live.generate(self.op, dtype, gen_seed, torch)
            except Exception as exc:
                self.skip(f"sample_inputs raised {type(exc).__name__}")
                continue
            picked = spread(samples, max_samples)
            self.doc["totals"][dtype] = {"all": len(samples), "picked": len(picked) if self.spellings else 0}
            if not self.spellings:
                continue
            for index, s in picked:
                mark = (len(self.store.arrays), len(self.doc["samples"]), len(self.doc["cases"]))
                sample = self.add_sample(dtype, index, s, gen_seed=gen_seed)
                self.run_sample(sample)
                self.cap_size(mark)
        if self.nondeterministic:
            self.doc["nondeterministic"] = True
            self.rerun_all()
        self.build_errors()
        self.live.clear()
        return self.doc

    def rerun(self, sample, first, fn, kind, times) -> bool:
        """Rerun with the same seed; keep the runs that differ from the first (upstream vs itself)."""
        found = False
        for _ in range(times):
            again = self.call(fn, kind, sample)
            if not same_values(first, again, self.store.arrays):
                found = True
                if again["ok"] and not any(same_values(again, {"ok": True, "value": v}, self.store.arrays)
                                           for v in sample.get("again", [])):
                    sample.setdefault("again", []).append(again["value"])
        return found

    def rerun_all(self):
        """A nondeterministic op (MKL's gelsy is) varies only now and then: measure every sample."""
        cases = {c["id"]: c for c in self.doc["cases"]}
        for sample in self.doc["samples"]:
            ref = cases.get(sample.get("ref_case"))
            if ref is not None and not sample["random"] and not sample["undefined"]:
                self.rerun(sample, ref["upstream"], ref["fn"], ref["variant"], NONDETERMINISTIC_RERUNS)

    def cap_size(self, mark):
        """Drop the sample just added if it stores too much (a few OpInfo samples hold ~10^7 values)."""
        keys = list(self.store.arrays)[mark[0]:]
        if sum(self.store.arrays[k].nbytes for k in keys) <= MAX_RESULT_BYTES:
            return
        for k in keys:
            del self.store.arrays[k]
        del self.doc["samples"][mark[1]:], self.doc["cases"][mark[2]:]
        self.skip(f"results store more than {MAX_RESULT_BYTES >> 20} MB")

    def build_errors(self):
        function = [fn for kind, fn in self.spellings if kind == "function"]
        if self.op.error_inputs_func is None:
            return
        gen_seed = live.seed_of(self.seed, self.key, "error_inputs")
        try:  # seeded: an error input regenerated on ours must be the same
            errors = live.generate(self.op, "error_inputs", gen_seed, self.torch)
            types = live.error_types(self.op, gen_seed, self.torch)
        except Exception as exc:  # e.g. it needs more than a device
            self.skip(f"error_inputs raised {type(exc).__name__}")
            return
        self.doc["totals"]["error_inputs"] = {"all": len(errors), "picked": len(errors) if function else 0}
        for index, e in enumerate(errors if function else []):
            sample = self.add_sample("error_inputs", index, e, kind="error", gen_seed=gen_seed)
            res = self.call(function[0], "function", sample)
            self.add_case(sample, "function", function[0], res, expected=types[index])


def _tensors(tree, torch):
    if isinstance(tree, torch.Tensor):
        yield tree
    elif isinstance(tree, (list, tuple)):
        for x in tree:
            yield from _tensors(x, torch)
    elif isinstance(tree, dict):
        for x in tree.values():
            yield from _tensors(x, torch)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--ops", default="", help="comma-separated OpInfo names or name.variant; empty = all")
    ap.add_argument("--dtypes", default="", help="comma-separated dtype names; empty = all supported")
    ap.add_argument("--max-dtypes", type=int, default=99)
    ap.add_argument("--max-samples", type=int, default=0, help="per op and dtype, evenly spread; 0 = all")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("--list", action="store_true", help="print the selected entries' keys as JSON")
    ap.add_argument("keys", nargs="*", help="OpInfo keys (added to --ops)")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    import torch
    torch.set_num_threads(1)  # deterministic reductions, and the machines are shared
    from torch.testing._internal.common_methods_invocations import op_db
    ops = select_ops(op_db, [x for x in a.ops.split(",") if x] + a.keys)
    if a.list:
        print(json.dumps([op_key(op) for op in ops]))
        return
    rev = naming.reverse_map(torch)
    a.out.mkdir(parents=True, exist_ok=True)
    dtypes = [x for x in a.dtypes.split(",") if x] or None
    for op in ops:
        start = time.perf_counter()
        gen = OpCases(op, torch, rev, a.seed, a.timeout)
        try:
            doc = gen.build(pick_dtypes(op, dtypes, a.max_dtypes), a.max_samples)
        except Exception as exc:  # one broken OpInfo entry must not lose the others
            doc = gen.doc
            doc["generation_error"] = calls.describe_exception(exc, "generate")
        doc["seconds"] = round(time.perf_counter() - start, 3)
        gen.store.save(a.out / f"{gen.key}.npz")
        (a.out / f"{gen.key}.json").write_text(json.dumps(doc))
        print(f"{gen.key}: {len(doc['cases'])} cases in {doc['seconds']}s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
