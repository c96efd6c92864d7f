"""Worker of the gradient sweep, run in either interpreter (imports numpy, its own torch, golden).

    python -m golden.grads_worker list [--ops a,b]
    python -m golden.grads_worker generate --out DIR [--dtypes float32,float64] [--max-samples N]
                                           [--checks K] [--seed S] KEY [KEY ...]
    python -m golden.grads_worker replay --cases DIR --out DIR KEY [KEY ...]

``generate`` runs on upstream. For every OpInfo entry that supports autograd, its samples made with
``requires_grad=True`` in float32/float64 (what backward supports on CPU) are stored with a mask of
the tensors that require grad (in codec's traversal order), the indices of the outputs that are
differentiable, a seeded random cotangent per such output and a random vector per gradient. Cases,
each one call of the entry's first nameable non-in-place spelling (through upstream's
``gradcheck_wrapper`` where the entry has one):

- ``grad``: (differentiable outputs, torch.autograd.grad of them w.r.t. every input requiring grad
  for the cotangent); the outputs' grad_fn names are recorded beside;
- ``gradgrad`` (entries with supports_gradgrad): the same with create_graph=True and the cotangents
  requiring grad, then grad of sum(vjp * v) w.r.t. inputs + cotangents;
- ``gradcheck`` / ``gradgradcheck`` (the first K float64 samples): torch.autograd.gradcheck /
  gradgradcheck of the call, with upstream's OpInfo settings (nondet_tol) and fast_mode=True; run
  on upstream too, so a sample upstream itself fails is told apart.

A sample whose output_process_fn_grad is a lambda, with an input the codec cannot carry, or with
inputs over generate.MAX_SAMPLE_BYTES is a "regen" sample (as in generate.py): stored as a digest
of its inputs, the generator's seed and its index; each side regenerates it from OpInfo (live.py)
and ours judges it only on inputs equal to upstream's bit for bit. An entry with no nameable
spelling is called through its OpInfo callable ("opinfo:op") on both sides.

Like generate.py, a floating grad/gradgrad case is rerun with inputs widened to float64 ("high",
float32 samples) or narrowed to float32 ("narrow", float64 samples), for tolerance.py, and a call
that draws from the default generator is marked "random". ``replay`` runs the same cases on ours.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

from . import calls, codec, generate, live, naming, replay

DTYPES = ("float32", "float64")
NONFUNCTIONAL = ("inplace", "inplace_operator")  # an in-place call on a leaf requiring grad raises
CHECK_SETTINGS = {"eps": 1e-6, "atol": 1e-5, "rtol": 1e-3, "fast_mode": True}
# Entries whose OpInfo callable is a lambda around a nameable function: the function, and how the
# lambda calls it ("seed42": upstream's wrapper_set_seed, manual_seed(42) then the call; "swap01":
# the first two positional arguments exchanged). Checked on upstream against the lambda itself.
_SEEDED = ("scaled_dot_product_attention", "dropout", "dropout2d", "dropout3d", "alpha_dropout",
           "rrelu", "fractional_max_pool2d", "fractional_max_pool3d", "multi_head_attention_forward")
ADAPTED = {
    **{f"nn.functional.{n}": (f"torch.nn.functional.{n}", "seed42") for n in _SEEDED},
    "nn.functional.feature_alpha_dropout.with_train": ("torch.nn.functional.feature_alpha_dropout", "seed42"),
    "nn.functional.feature_alpha_dropout.without_train": ("torch.nn.functional.feature_alpha_dropout",
                                                          "seed42"),
    "nn.functional.embedding": ("torch.nn.functional.embedding", "swap01"),
    "nn.functional.embedding_bag": ("torch.nn.functional.embedding_bag", "swap01"),
    "einsum": ("torch.einsum", "swap01"),
    "special.polygamma.special_polygamma_n_0": ("torch.special.polygamma", "swap01"),
}


def adapted(how: str | None, fn, torch):
    if how is None:
        return fn
    if how == "seed42":
        def seeded(*a, **k):
            torch.manual_seed(42)
            return fn(*a, **k)
        return seeded
    if how == "swap01":
        return lambda a, b, *rest, **k: fn(b, a, *rest, **k)
    raise ValueError(f"unknown adapter {how}")


# ---------------------------------------------------------------------------------------------- calls

def tensor_leaves(value, torch, out: list) -> list:
    """Tensors of a value in codec.encode's traversal order (the order codec.decode keeps them)."""
    if isinstance(value, torch.Tensor):
        out.append(value)
    elif isinstance(value, slice):
        for x in (value.start, value.stop, value.step):
            tensor_leaves(x, torch, out)
    elif isinstance(value, (list, tuple)):
        for x in value:
            tensor_leaves(x, torch, out)
    elif isinstance(value, dict):
        for x in value.values():
            tensor_leaves(x, torch, out)
    return out


def swap(value, table: dict, torch):
    """``value`` with the tensors whose id is in ``table`` replaced (gradcheck's perturbed inputs)."""
    if isinstance(value, torch.Tensor):
        return table.get(id(value), value)
    if isinstance(value, list):
        return [swap(x, table, torch) for x in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(swap(x, table, torch) for x in value)
    if isinstance(value, dict):
        return {k: swap(x, table, torch) for k, x in value.items()}
    return value


def wrapped(name: str | None, fn, torch):
    """The call as upstream's OpInfo gradcheck_wrapper makes it (see its opinfo/core.py)."""
    if name is None:
        return fn
    if name == "gradcheck_wrapper_hermitian_input":
        return lambda input, *a, **k: fn(input + input.mH, *a, **k)
    if name == "gradcheck_wrapper_ctc_loss":
        return lambda input, *a, **k: fn(input.log_softmax(dim=2), *a, **k)

    def triangular(*args, upper=False, idx=0, **k):
        tri = args[idx].triu() if upper else args[idx].tril()
        return fn(*args[:idx], tri, *args[idx + 1:], upper, **k)

    if name == "gradcheck_wrapper_triangular_input":
        return triangular
    if name == "gradcheck_wrapper_triangular_input_real_positive_diagonal":
        def positive(*args, upper=False, idx=0, **k):
            d = args[idx].diagonal(0, -2, -1)
            arg = args[idx] - torch.diag_embed(d) + torch.diag_embed(torch.ones_like(d))
            return triangular(*args[:idx], arg, *args[idx + 1:], upper=upper, idx=idx, **k)
        return positive
    if name == "wrapper_set_seed":  # the harness reseeds before every call; this is upstream's seed
        def seeded(*a, **k):
            torch.manual_seed(42)
            return fn(*a, **k)
        return seeded
    if name == "gradcheck_wrapper_masked_operation":
        def masked(input, *a, **k):
            out = fn(input, *a, **k)
            if k.get("mask") is not None:
                out = torch.where(torch.masked._output_mask(fn, input, *a, **k), out, out.new_zeros([]))
            return out
        return masked
    if name == "gradcheck_wrapper_masked_pointwise_operation":
        def masked_pw(input, *a, **k):
            out = fn(input, *a, **k)
            im, om = k.get("input_mask"), k.get("other_mask")
            if im is not None and om is not None:
                mask = torch.masked._input_mask(input, *a, **dict(mask=torch.logical_and(im, om), **k))
                out = torch.where(mask, out, out.new_zeros([]))
            return out
        return masked_pw
    raise ValueError(f"unknown gradcheck_wrapper {name}")


class Call:
    """One sample rebuilt in this interpreter: inputs, cotangents, the call, its outputs.

    ``live_sample``: a regenerated OpInfo sample (live.py) whose inputs are copied instead of
    decoded, and whose output_process_fn_grad applies; ``fn``: the entry's own OpInfo callable."""

    def __init__(self, doc, sample, arrays, torch, cast=None, live_sample=None, fn=None):
        self.torch, self.sample = torch, sample
        fn = fn or naming.resolve(doc["fn"], torch)
        self.fn = wrapped(doc.get("wrapper"), adapted(doc.get("adapter"), fn, torch), torch)
        kept: list = []
        self.process = None
        if live_sample is not None:
            self.args, self.kwargs = calls.live_copy(live.parts(live_sample), torch, cast, kept)
            if sample.get("process"):
                self.process = live_sample.output_process_fn_grad
        else:
            self.args = codec.decode({"T": "list", "v": sample["args"]}, arrays, torch, cast, kept)
            self.kwargs = {k: codec.decode(v, arrays, torch, cast, kept) for k, v in sample["kwargs"].items()}
        if len(kept) != len(sample["rg"]):
            raise RuntimeError(f"{len(kept)} tensors rebuilt, {len(sample['rg'])} in the mask")
        self.inputs = [t.requires_grad_(True) for t, r in zip(kept, sample["rg"]) if r]
        self.cots = [codec.decode(c, arrays, torch, cast) for c in sample.get("cot", [])]
        self.vs = [codec.decode(v, arrays, torch, cast) for v in sample.get("v2", [])]

    def outputs_all(self, args=None, kwargs=None) -> list:
        self.torch.manual_seed(self.sample["seed"])
        out = self.fn(*(self.args if args is None else args), **(self.kwargs if kwargs is None else kwargs))
        if self.process is not None:
            out = self.process(out)
        return tensor_leaves(out, self.torch, [])

    def outputs(self, args=None, kwargs=None):
        flat = self.outputs_all(args, kwargs)
        return [flat[i] for i in self.sample["out_idx"]]

    def grad(self):
        outs = self.outputs()
        grads = self.torch.autograd.grad(outs, self.inputs, self.cots, allow_unused=True)
        names = [type(o.grad_fn).__name__ if o.grad_fn is not None else None for o in outs]
        return (tuple(outs), tuple(grads)), names

    def gradgrad(self):
        torch = self.torch
        outs = self.outputs()
        cots = [c.requires_grad_(True) for c in self.cots]
        grads = torch.autograd.grad(outs, self.inputs, cots, create_graph=True, allow_unused=True)
        pairs = [(g, v) for g, v in zip(grads, self.vs)
                 if g is not None and v is not None and g.requires_grad]
        if not pairs:
            return tuple([None] * (len(self.inputs) + len(cots))), None
        gg = torch.autograd.grad([g for g, _ in pairs], self.inputs + cots, [v for _, v in pairs],
                                 allow_unused=True)
        return tuple(gg), None

    def check(self, kind: str, nondet_tol: float):
        torch = self.torch

        def f(*xs):
            table = {id(t): x for t, x in zip(self.inputs, xs)}
            return tuple(self.outputs(swap(self.args, table, torch), swap(self.kwargs, table, torch)))

        if kind == "gradcheck":
            return torch.autograd.gradcheck(f, tuple(self.inputs), nondet_tol=nondet_tol,
                                            check_undefined_grad=True, check_grad_dtypes=True,
                                            check_batched_grad=False, **CHECK_SETTINGS), None
        return torch.autograd.gradgradcheck(f, tuple(self.inputs), nondet_tol=nondet_tol,
                                            check_batched_grad=False, **CHECK_SETTINGS), None


def materialized(value, torch):
    """Upstream returns some gradients as ZeroTensors (no storage): their values are zeros."""
    if isinstance(value, torch.Tensor):
        is_zero = getattr(value, "_is_zerotensor", None)
        return torch.zeros(value.shape, dtype=value.dtype) if is_zero is not None and is_zero() else value
    if isinstance(value, (list, tuple)):
        return type(value)(materialized(v, torch) for v in value)
    return value


@calls.untimed_retry
def run_case(doc, sample, arrays, torch, store, kind, *, cast=None, timeout=20.0, probe_rng=False,
             nondet_tol=0.0, live_sample=None, fn=None) -> dict:
    """One case (grad, gradgrad, gradcheck, gradgradcheck) -> record. Never raises."""
    res: dict = {"ok": False}
    phase = "rebuild"
    old = signal.signal(signal.SIGALRM, calls._alarm)
    signal.setitimer(signal.ITIMER_REAL, (timeout or 0) * (3 if "check" in kind else 1))  # 0: no timer
    start = time.perf_counter()
    try:
        call = Call(doc, sample, arrays, torch, cast, live_sample, fn)
        state = None
        if probe_rng:  # a call that reseeds (wrapper_set_seed) is random only if it draws after that
            reseeds = "seed42" in (doc.get("adapter"), doc.get("wrapper")) or doc.get("wrapper") == "wrapper_set_seed"
            state = torch.Generator().manual_seed(42 if reseeds else sample["seed"]).get_state()
        phase = kind
        if kind == "grad":
            value, res["grad_fn"] = call.grad()
        elif kind == "gradgrad":
            value, _ = call.gradgrad()
        else:
            try:
                value = call.check(kind, nondet_tol)[0]
            except sys.modules["torch.autograd.gradcheck"].GradcheckError as exc:
                value, res["message"] = False, str(exc)[:400]
        if probe_rng:
            res["rng_advanced"] = not torch.equal(state, torch.default_generator.get_state())
        phase = "encode"
        res["value"] = codec.encode(materialized(value, torch), store, torch, storage=False)
        res["ok"] = True
    except (Exception, calls.CaseTimeout) as exc:
        res["exc"] = calls.describe_exception(exc, phase)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    res["seconds"] = round(time.perf_counter() - start, 6)
    return res


# ---------------------------------------------------------------------------------------------- generate

def spelling(op, rev, torch) -> str | None:
    found, _ = generate.spellings(op, rev, torch)
    names = [n for kind, n in found if kind not in NONFUNCTIONAL and not n.startswith(live.OPINFO)]
    return names[0] if names else None


def grad_seed(base: int, key: str, dtype: str) -> int:
    """Generator seed of one entry's samples made with requires_grad=True."""
    return base + zlib.crc32(f"{key}|{dtype}|grad".encode()) % (2 ** 31)


def grad_samples(op, dtype: str, seed: int, torch) -> list:
    torch.manual_seed(seed)
    return list(op.sample_inputs("cpu", getattr(torch, dtype), requires_grad=True))


class GradRegenerator(live.Regenerator):
    """live.Regenerator of samples made with requires_grad=True (the ones this sweep stores)."""

    def sample(self, key: str, dtype: str, seed: int, index: int):
        lst = self._lists.get((key, dtype, seed))
        if lst is None:
            self._lists.clear()  # one list at a time
            lst = self._lists[(key, dtype, seed)] = grad_samples(self.op(key), dtype, seed, self.torch)
        return lst[index]


def wrapper_name(op) -> str | None:
    w = op.gradcheck_wrapper
    return None if w.__qualname__.endswith("<lambda>") else w.__name__


class GradCases:
    """Builds the gradient case file of one OpInfo entry."""

    def __init__(self, op, torch, rev, seed, timeout):
        self.op, self.torch, self.seed, self.timeout = op, torch, seed, timeout
        self.key = generate.op_key(op)
        self.store = codec.Store("a")
        fn, how = spelling(op, rev, torch), None
        if fn is None and self.key in ADAPTED:
            fn, how = ADAPTED[self.key]
        if fn is None:  # called through OpInfo's own callable, which each side takes from its database
            fn = live.OPINFO + "op"
        self.opfn = op.op if fn.startswith(live.OPINFO) else None
        self.live: dict[str, object] = {}  # sample id -> the live OpInfo sample, for regen samples
        self.doc = {"key": self.key, "name": op.name, "fn": fn, "adapter": how,
                    "wrapper": wrapper_name(op), "gradgrad": bool(op.supports_gradgrad),
                    "nondet_tol": float(op.gradcheck_nondet_tol), "totals": {}, "skipped": {},
                    "samples": [], "cases": []}

    def skip(self, why: str, n: int = 1):
        self.doc["skipped"][why] = self.doc["skipped"].get(why, 0) + n

    def rand(self, like, tag: str):
        torch = self.torch
        g = torch.Generator().manual_seed(zlib.crc32(f"{self.key}|{tag}".encode()) % (2 ** 31))
        return torch.randn(like.shape, dtype=like.dtype, generator=g)

    def encode_inputs(self, s, leaves) -> tuple[list, dict, str | None]:
        """Stored descriptors of sample ``s``, or why each side regenerates it instead (live.py):
        its output_process_fn_grad is a lambda, an input cannot travel, or the inputs are large."""
        marker = object()
        try:
            identity = s.output_process_fn_grad(marker) is marker
        except Exception:
            identity = False
        if not identity:
            return [], {}, "output_process_fn_grad transforms the output"
        if sum(t.numel() * t.element_size() for t in leaves) > generate.MAX_SAMPLE_BYTES:
            return [], {}, f"inputs over {generate.MAX_SAMPLE_BYTES >> 20} MB"
        mark = len(self.store.arrays)
        try:
            return ([codec.encode(a, self.store, self.torch, storage=True) for a in (s.input, *s.args)],
                    {k: codec.encode(v, self.store, self.torch, storage=True) for k, v in s.kwargs.items()}, None)
        except codec.Unserializable as exc:
            for k in list(self.store.arrays)[mark:]:
                del self.store.arrays[k]
            return [], {}, f"unserializable input: {exc}"

    def add_sample(self, dtype, index, s, gen_seed) -> dict | None:
        torch = self.torch
        values = [s.input, *s.args, *s.kwargs.values()]
        leaves = tensor_leaves(values, torch, [])
        rg = [bool(t.requires_grad) for t in leaves]
        if not any(rg):
            self.skip("no input requires grad")
            return None
        sid = f"s{len(self.doc['samples'])}"
        seed = self.seed + zlib.crc32(f"{self.key}|{dtype}|grad|{index}".encode()) % (2 ** 31)
        args, kwargs, why = self.encode_inputs(s, leaves)
        sample = {"id": sid, "dtype": dtype, "index": index, "seed": seed, "args": args, "kwargs": kwargs,
                  "rg": rg, "random": False}
        if why is not None:
            sample.update(regen=why, gen_seed=gen_seed, digest=live.digest(s, torch),
                          process=why.startswith("output_process_fn_grad"))
            self.live[sid] = s
        # outputs: which are differentiable, on upstream, for this very call
        try:
            call = Call(self.doc, dict(sample, out_idx=[]), self.store.arrays, torch, None, self.live.get(sid),
                        self.opfn)
            flat = call.outputs_all()
        except Exception as exc:
            self.skip(f"forward raised {type(exc).__name__}")
            self.live.pop(sid, None)
            return None
        if self.doc["adapter"] and not self.same_as_opinfo(s, flat):
            self.skip("the adapted call does not reproduce the OpInfo lambda")
            return None
        sample["out_idx"] = [i for i, t in enumerate(flat) if t.requires_grad]
        if not sample["out_idx"]:
            self.skip("no output requires grad")
            return None
        sample["cot"] = [codec.encode(self.rand(flat[i], f"{sid}|cot{i}"), self.store, torch, storage=True)
                         for i in sample["out_idx"]]
        self.doc["samples"].append(sample)
        return sample

    def same_as_opinfo(self, s, flat) -> bool:
        torch = self.torch
        try:
            torch.manual_seed(0)
            theirs = tensor_leaves(self.op.op(s.input, *s.args, **s.kwargs), torch, [])
        except Exception:
            return False
        return len(theirs) == len(flat) and all(
            a.shape == b.shape and a.dtype == b.dtype and torch.equal(a.detach(), b.detach())
            for a, b in zip(theirs, flat))

    def add_case(self, sample, kind, res, **extra):
        case = {"id": f"c{len(self.doc['cases'])}", "sample": sample["id"], "variant": kind,
                "fn": self.doc["fn"], "upstream": res, **extra}
        self.doc["cases"].append(case)
        return case

    def run(self, sample, kind, **kw):
        return run_case(self.doc, sample, self.store.arrays, self.torch, self.store, kind,
                        timeout=self.timeout, nondet_tol=self.doc["nondet_tol"],
                        live_sample=self.live.get(sample["id"]), fn=self.opfn, **kw)

    def references(self, sample, kind, case):
        """float64 ("high") or float32 ("narrow") reruns of a computed, non-random case."""
        for table, slot in ((codec.UPCAST, "high"), (codec.NARROW, "narrow")):
            if sample["dtype"] in table and not sample["random"]:
                rerun = self.run(sample, kind, cast=table)
                if rerun["ok"]:
                    case[slot] = rerun["value"]

    def run_sample(self, sample, check: bool):
        res = self.run(sample, "grad", probe_rng=True)
        sample["random"] = bool(res.pop("rng_advanced", False))
        case = self.add_case(sample, "grad", res)
        if res["ok"]:
            self.references(sample, "grad", case)
        if self.doc["gradgrad"]:
            grads = res["value"]["v"][1]["v"] if res["ok"] else []
            torch = self.torch
            sample["v2"] = []
            for i, g in enumerate(grads):
                if g["T"] != "tensor":
                    sample["v2"].append({"T": "none"})
                    continue
                like = torch.empty(g["shape"], dtype=getattr(torch, g["dtype"]))
                sample["v2"].append(codec.encode(self.rand(like, f"{sample['id']}|v{i}"), self.store,
                                                 torch, storage=True))
            if res["ok"]:
                res2 = self.run(sample, "gradgrad")
                case2 = self.add_case(sample, "gradgrad", res2)
                if res2["ok"]:
                    self.references(sample, "gradgrad", case2)
        if check:
            self.add_case(sample, "gradcheck", self.run(sample, "gradcheck"))
            if self.doc["gradgrad"]:
                self.add_case(sample, "gradgradcheck", self.run(sample, "gradgradcheck"))

    def build(self, dtypes, max_samples, checks):
        torch, op = self.torch, self.op
        try:
            wrapped(self.doc["wrapper"], None, torch)
        except ValueError as exc:
            self.skip(str(exc))
            return self.doc
        backward = {codec.dtype_name(d) for d in op.supported_backward_dtypes("cpu")}
        for dtype in [d for d in dtypes if d in backward]:
            gen_seed = grad_seed(self.seed, self.key, dtype)
            try:
                samples = grad_samples(op, dtype, gen_seed, torch)
            except Exception as exc:
                self.skip(f"sample_inputs raised {type(exc).__name__}")
                continue
            picked = generate.spread(samples, max_samples)
            self.doc["totals"][dtype] = {"all": len(samples), "picked": len(picked)}
            n_checked = 0
            for index, s in picked:
                mark = (len(self.store.arrays), len(self.doc["samples"]), len(self.doc["cases"]))
                sample = self.add_sample(dtype, index, s, gen_seed)
                if sample is None:
                    continue
                check = dtype == "float64" and n_checked < checks
                self.run_sample(sample, check)
                if self.cap_size(mark):
                    n_checked += check
        self.live.clear()
        return self.doc

    def cap_size(self, mark) -> bool:
        keys = list(self.store.arrays)[mark[0]:]
        if sum(self.store.arrays[k].nbytes for k in keys) <= generate.MAX_SAMPLE_BYTES:
            return True
        for k in keys:
            del self.store.arrays[k]
        del self.doc["samples"][mark[1]:], self.doc["cases"][mark[2]:]
        self.skip(f"sample stores more than {generate.MAX_SAMPLE_BYTES >> 20} MB")
        return False


def autograd_keys(op_db, names) -> list[str]:
    return [generate.op_key(op) for op in generate.select_ops(op_db, names) if op.supports_autograd]


def do_generate(a, torch):
    from torch.testing._internal.common_methods_invocations import op_db
    ops = {generate.op_key(op): op for op in op_db}
    rev = naming.reverse_map(torch)
    a.out.mkdir(parents=True, exist_ok=True)
    dtypes = [x for x in a.dtypes.split(",") if x] or list(DTYPES)
    for key in a.keys:
        start = time.perf_counter()
        gen = GradCases(ops[key], torch, rev, a.seed, a.timeout)
        try:
            doc = gen.build(dtypes, a.max_samples, a.checks)
        except Exception as exc:  # one broken OpInfo entry must not lose the others
            doc = gen.doc
            doc["generation_error"] = calls.describe_exception(exc, "generate")
        doc["seconds"] = round(time.perf_counter() - start, 3)
        gen.store.save(a.out / f"{key}.npz")
        (a.out / f"{key}.json").write_text(json.dumps(doc))
        print(f"{key}: {len(doc['cases'])} cases in {doc['seconds']}s", file=sys.stderr, flush=True)


def replay_op(key, cases_dir: Path, torch, timeout) -> tuple[dict, codec.Store]:
    """Ours' records of one entry's cases; a regen sample's cases run only on inputs that are
    upstream's bit for bit (replay.regenerate), else they are recorded unjudged."""
    doc = json.loads((cases_dir / f"{key}.json").read_text())
    with np.load(cases_dir / f"{key}.npz") as z:
        arrays = {k: z[k] for k in z.files}
    samples = {s["id"]: s for s in doc["samples"]}
    store = codec.Store("r")
    regen = GradRegenerator(torch)
    fn = regen.callable(key, doc["fn"]) if doc["fn"].startswith(live.OPINFO) else None
    found: dict[str, tuple] = {}  # sample id -> (live sample or None, why it is not judged)
    results = {}
    for c in doc["cases"]:
        sample = samples[c["sample"]]
        s = None
        if sample.get("regen"):
            if sample["id"] not in found:
                found[sample["id"]] = replay.regenerate(regen, key, sample, torch)
            s, unjudged = found[sample["id"]]
            if unjudged is not None:
                results[c["id"]] = {"ok": False, "unjudged": unjudged}
                continue
        results[c["id"]] = run_case(doc, sample, arrays, torch, store, c["variant"], timeout=timeout,
                                    nondet_tol=doc["nondet_tol"], live_sample=s, fn=fn)
    return {"key": key, "results": results}, store


def do_replay(a, torch):
    a.out.mkdir(parents=True, exist_ok=True)
    for key in a.keys:
        start = time.perf_counter()
        try:
            doc, store = replay_op(key, a.cases, torch, a.timeout)
        except Exception as exc:
            doc, store = {"key": key, "op_error": calls.describe_exception(exc, "replay")}, codec.Store("r")
        doc["seconds"] = round(time.perf_counter() - start, 3)
        store.save(a.out / f"{key}.npz")
        (a.out / f"{key}.json").write_text(json.dumps(doc))  # written last: its presence means done
        print(f"{key}: {doc['seconds']}s", file=sys.stderr, flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("mode", choices=("list", "generate", "replay"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--cases", type=Path)
    ap.add_argument("--ops", default="")
    ap.add_argument("--dtypes", default="")
    ap.add_argument("--max-samples", type=int, default=8)
    ap.add_argument("--checks", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("keys", nargs="*")
    a = ap.parse_intermixed_args(argv)
    warnings.simplefilter("ignore")
    if a.mode == "replay":
        try:
            import torch
        except BaseException as exc:  # ours cannot import: every entry fails to start
            err = calls.describe_exception(exc, "import")
            a.out.mkdir(parents=True, exist_ok=True)
            for key in a.keys:
                (a.out / f"{key}.json").write_text(json.dumps({"key": key, "import_error": err}))
            return
    else:
        import torch
    try:
        torch.set_num_threads(1)
    except Exception:
        pass
    if a.mode == "list":
        from torch.testing._internal.common_methods_invocations import op_db
        print(json.dumps(autograd_keys(op_db, [x for x in a.ops.split(",") if x])))
    elif a.mode == "generate":
        do_generate(a, torch)
    else:
        do_replay(a, torch)


if __name__ == "__main__":
    main()
