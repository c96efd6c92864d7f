"""Upstream's OpInfo samples under torch.func.vmap, on both sides.

``gen`` (upstream's interpreter: only it can import the OpInfo database) takes each op's first
samples (float32, after ``torch.manual_seed(0)``), gives every positional tensor argument a batch
of two along dim 0 (the sample and a deterministic variation of it; other arguments stay
unbatched), stores the batched inputs with the golden harness's codec, runs ``vmap`` over them
and records the result, and the result again with the floating inputs widened to float64 (what
the tolerance is derived from). ``run`` (ours) rebuilds exactly those inputs and runs the same
``vmap``.

    python vmap_opinfo.py gen --ops all|name,name --samples N --out DIR
    python vmap_opinfo.py run --out DIR
"""

from __future__ import annotations

import argparse
import json
import signal
import warnings
from pathlib import Path

import numpy as np


def _vary(t, torch):
    """A second batch element: a deterministic change of ``t`` that keeps its dtype and range."""
    if t.dtype == torch.bool:
        return ~t
    if t.is_floating_point() or t.is_complex():
        return t * 0.75 + 0.125
    return t.flip(0) if t.dim() else t


def _flat(out, torch):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _flat(o, torch)]
    return []


def _values(t, torch):
    t = t.detach().resolve_conj().resolve_neg()
    if t.is_complex():
        t = torch.view_as_real(t)
    return [list(t.shape), str(t.dtype).replace("torch.", ""),
            t.to(torch.float64).reshape(-1).tolist()]


def call_vmap(fn, args, kwargs, spots, torch, widen=False):
    from torch.func import vmap

    batched = [args[i] for i in spots]
    if widen:
        batched = [b.to(torch.complex128 if b.is_complex() else torch.float64)
                   if (b.is_floating_point() or b.is_complex()) else b for b in batched]

    def f(*ts):
        a = list(args)
        for i, t in zip(spots, ts):
            a[i] = t
        return fn(*a, **kwargs)

    out = vmap(f)(*batched)
    return [_values(t, torch) for t in _flat(out, torch)]


def _err(e):
    return f"{type(e).__name__}: {e}"[:300]


def gen(names, max_samples: int, out: Path) -> None:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    from torchnative.testing.golden import codec, naming

    rev = naming.reverse_map(torch)
    store = codec.Store()
    cases = []
    skipped = {}
    for op in op_db:
        key = f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name
        if names != "all" and key not in names:
            continue
        if torch.float32 not in op.supported_dtypes("cpu"):
            skipped[key] = "no float32"
            continue
        fn = naming.qualified_name(op.op, rev, torch)
        if fn is None:
            skipped[key] = "its callable has no qualified name"
            continue
        torch.manual_seed(0)
        try:
            samples = list(op.sample_inputs("cpu", torch.float32, requires_grad=False))
        except Exception as e:
            skipped[key] = "samples: " + _err(e)
            continue
        for n, sample in enumerate(samples[:max_samples]):
            args = [sample.input, *sample.args]
            spots = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor)]
            for i in spots:
                args[i] = torch.stack([args[i], _vary(args[i], torch)])
            try:
                enc_args = [codec.encode(a, store, torch, storage=True) for a in args]
                enc_kwargs = {k: codec.encode(v, store, torch, storage=True)
                              for k, v in sample.kwargs.items()}
            except codec.Unserializable as e:
                skipped[f"{key}#{n}"] = "unserializable: " + str(e)[:100]
                continue
            case = {"op": key, "n": n, "fn": fn, "args": enc_args, "kwargs": enc_kwargs,
                    "spots": spots}
            try:
                case["low"] = call_vmap(naming.resolve(fn, torch), args, sample.kwargs, spots,
                                        torch)
            except Exception as e:
                case["err"] = _err(e)
            if "low" in case:
                try:  # the float64 rerun only measures upstream's precision; it may refuse
                    case["high"] = call_vmap(naming.resolve(fn, torch), args, sample.kwargs,
                                             spots, torch, widen=True)
                except Exception:
                    pass
            cases.append(case)
    out.mkdir(parents=True, exist_ok=True)
    store.save(out / "inputs.npz")
    (out / "cases.json").write_text(json.dumps({"cases": cases, "skipped": skipped}))


class TooLong(Exception):
    """A sample ran past its time budget (recorded as ours erroring)."""


def _too_long(signum, frame):
    raise TooLong("the sample exceeded its time budget")


def run(out: Path, timeout: int = 120) -> None:
    import torch
    from torchnative.testing.golden import codec, naming

    doc = json.loads((out / "cases.json").read_text())
    arrays = dict(np.load(out / "inputs.npz"))
    results = []
    signal.signal(signal.SIGALRM, _too_long)
    for case in doc["cases"]:
        row = {"op": case["op"], "n": case["n"]}
        signal.alarm(timeout)
        try:
            args = codec.decode({"T": "list", "v": case["args"]}, arrays, torch)
            kwargs = {k: codec.decode(v, arrays, torch) for k, v in case["kwargs"].items()}
            row["low"] = call_vmap(naming.resolve(case["fn"], torch), list(args), kwargs,
                                   case["spots"], torch)
        except Exception as e:
            row["err"] = _err(e)
        finally:
            signal.alarm(0)
        results.append(row)
    (out / "ours.json").write_text(json.dumps(results))


def main():
    warnings.simplefilter("ignore")
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=("gen", "run"))
    p.add_argument("--ops", default="all")
    p.add_argument("--samples", type=int, default=2)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if a.mode == "gen":
        gen("all" if a.ops == "all" else set(a.ops.split(",")), a.samples, Path(a.out))
    else:
        run(Path(a.out))


if __name__ == "__main__":
    main()
