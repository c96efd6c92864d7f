"""Worker for tests/differential/test_forward_ad_opinfo.py, run under either torch (not collected by pytest).

    python forward_ad_opinfo_worker.py make  CASES OPS MAX   (upstream) OpInfo samples + tangents
    python forward_ad_opinfo_worker.py run   CASES OUT DTYPES [--flip OVERLOAD] [--only OPS]

``make`` draws, for every OpInfo entry named in OPS (comma separated, or "all": every entry with
supports_forward_ad), up to MAX float64 samples and a seeded random tangent per floating tensor
argument, and saves them with torch.save (ours loads upstream's files bit-identically). ``run``
computes, per dtype, the primal and tangent of every floating output inside a dual level, and
writes OUT.npz (arrays) and OUT.json (per case: output names, or the error raised).
``--flip`` (ours only, the control) negates one overload's forward formula first.
"""

import io
import json
import sys
import warnings

import numpy as np
import torch
import torch.autograd.forward_ad as fwAD

warnings.filterwarnings("ignore")


def _leaves(sample):
    """(container, key) of every floating tensor among input, args (one list level) and kwargs."""
    slots = []
    def visit(holder, key):
        v = holder[key]
        if isinstance(v, torch.Tensor) and (v.is_floating_point() or v.is_complex()):
            slots.append((holder, key))
        elif isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v):
            holder[key] = lst = list(v)
            for i in range(len(lst)):
                visit(lst, i)
    visit(sample, "input")
    for i in range(len(sample["args"])):
        visit(sample["args"], i)
    for k in list(sample["kwargs"]):
        visit(sample["kwargs"], k)
    return slots


def make(cases_path, ops, max_samples):
    from torch.testing._internal.common_methods_invocations import op_db

    names = None if ops == "all" else set(ops.split(","))
    cases = []
    for op in op_db:
        key = f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name
        if not op.supports_forward_ad or (names is not None and key not in names):
            continue
        if torch.float32 not in op.supported_dtypes("cpu") or \
                torch.float64 not in op.supported_dtypes("cpu"):
            continue
        call = _name_of(op)
        if call is None:
            print(f"skip {key}: its callable has no importable name", file=sys.stderr)
            continue
        torch.manual_seed(0)
        try:
            samples = list(op.sample_inputs("cpu", torch.float64, requires_grad=False))[:max_samples]
        except Exception as e:
            print(f"skip {key}: samples: {e}", file=sys.stderr)
            continue
        for i, s in enumerate(samples):
            sample = {"input": s.input, "args": list(s.args), "kwargs": dict(s.kwargs)}
            g = torch.Generator().manual_seed(1000 + i)
            tangents = [torch.randn(h[k].shape, generator=g, dtype=h[k].dtype)
                        for h, k in _leaves(sample)]
            case = {"id": f"{key}#{i}", "op": key, "call": call, "sample": sample,
                    "tangents": tangents}
            buf = io.BytesIO()
            try:
                torch.save(case, buf)
            except Exception as e:  # a sample holding a module or a lambda cannot travel
                print(f"skip {key}#{i}: {e}", file=sys.stderr)
                continue
            if b"torch.testing._internal" in buf.getvalue() or call.startswith("torch.testing"):
                # ours cannot import upstream's test internals (they need expecttest)
                print(f"skip {key}#{i}: refers to torch.testing._internal", file=sys.stderr)
                continue
            cases.append(case)
    torch.save(cases, cases_path)
    print(json.dumps({"cases": len(cases)}))


def _name_of(op):
    """'module:qualname' of an OpInfo's function (else of its method variant) when importing it
    gives it back (our side has no OpInfo database: torch.testing._internal needs packages only
    upstream's side has)."""
    # the public spelling named like the entry (nn.functional.max_pool2d is a dispatching wrapper
    # whose own qualname is boolean_dispatch's)
    mod, _, attr = f"torch.{op.name}".rpartition(".")
    try:
        if _resolve(f"{mod}:{attr}") is op.op:
            return f"{mod}:{attr}"
    except (ImportError, AttributeError, ValueError):
        pass
    for fn in (op.op, op.method_variant):
        if fn is None:
            continue
        mod, qual = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
        if qual.startswith("_VariableFunctionsClass."):
            mod, qual = "torch", qual.split(".", 1)[1]
        elif type(fn).__name__ == "method_descriptor":
            mod, qual = "torch", f"Tensor.{fn.__name__}"
        if not mod or "<" in qual:
            continue
        name = f"{mod}:{qual}"
        try:
            if _resolve(name) is fn:
                return name
        except (ImportError, AttributeError, ValueError):
            continue
    return None


def _resolve(name):
    import importlib

    mod, qual = name.split(":", 1)
    obj = importlib.import_module(mod)
    for part in qual.split("."):
        obj = getattr(obj, part)
    return obj


def _cast(v, dtype):
    if isinstance(v, torch.Tensor) and v.is_floating_point():
        return v.to(dtype)
    if isinstance(v, torch.Tensor) and v.is_complex():
        return v.to(torch.complex64 if dtype == torch.float32 else torch.complex128)
    return v


def _outputs(out):
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _outputs(o)]
    return []


def _np(t):
    t = t.detach().resolve_conj().resolve_neg()
    # force: an efficient zero tangent (upstream's slogdet sign) refuses a plain numpy()
    return t.to(torch.complex128 if t.is_complex() else torch.float64).numpy(force=True).copy()


def run(cases_path, out_path, dtypes, only=None):
    import copy

    cases = torch.load(cases_path, weights_only=False)
    if only:
        cases = [c for c in cases if c["op"] in only]
    arrays, meta = {}, {}
    ops = {}
    for c in cases:
        op = ops.get(c["call"])
        if op is None:
            op = ops[c["call"]] = _resolve(c["call"])
        for dname in dtypes:
            dtype = getattr(torch, dname)
            sample = copy.deepcopy(c["sample"])
            slots = _leaves(sample)
            cid = f"{c['id']}|{dname}"
            try:
                with fwAD.dual_level():
                    for (h, k), t in zip(slots, c["tangents"]):
                        h[k] = fwAD.make_dual(_cast(h[k], dtype), _cast(t, dtype))
                    out = op(sample["input"], *sample["args"], **sample["kwargs"])
                    names = []
                    for j, o in enumerate(_outputs(out)):
                        if not (o.is_floating_point() or o.is_complex()):
                            continue
                        p, t = fwAD.unpack_dual(o)
                        arrays[f"{cid}|{j}|p"] = _np(p)
                        if t is not None:
                            arrays[f"{cid}|{j}|t"] = _np(t)
                        names.append(j)
                meta[cid] = {"outputs": names}
            except Exception as e:
                meta[cid] = {"error": type(e).__name__,
                             "message": str(e).split("\n")[0][:300]}
    np.savez(out_path + ".npz", **arrays)
    with open(out_path + ".json", "w") as f:
        json.dump(meta, f)
    print(json.dumps({"cases": len(meta)}))


def flip(overload):
    """The control: one forward formula with its sign flipped (ours only)."""
    from torchnative.csrc.autograd.forward import formulas
    from torchnative.csrc.ops.dispatcher import REGISTRY

    base, _, name = overload.partition(".")
    op = REGISTRY.overloads(f"aten::{base}")[name]
    spec = formulas.spec_for(op)
    for c in spec.formulas:
        c.code = compile(f"-({c.f.source})", "<flipped>", "eval")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        argv = sys.argv[2:]
        if "--flip" in argv:
            i = argv.index("--flip")
            flip(argv[i + 1])
            del argv[i:i + 2]
        only = None
        if "--only" in argv:
            i = argv.index("--only")
            only = set(argv[i + 1].split(","))
            del argv[i:i + 2]
        run(argv[0], argv[1], argv[2].split(","), only)
