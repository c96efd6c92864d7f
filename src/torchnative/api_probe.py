"""Call every public name of torch's user-facing namespaces once, with a typical argument.

Plain torch code: it runs on upstream torch and on ours alike (``python -m torchnative.api_probe``
under either interpreter), and the census (``torchnative.census --api``) compares the two.

On upstream (``--plan`` absent) each callable is tried with a fixed list of candidate argument
tuples, in order; the first that upstream accepts is the name's *typical argument*, and upstream
also runs it with float64 inputs so the census can bound upstream's own float32 error. On ours
(``--plan`` given) each name runs the candidate upstream chose (or, where upstream accepted
none, the first, to compare errors). Names that change process-wide state are not called here;
tests/differential/test_modes.py covers them.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import warnings

NAMESPACES = ("torch", "torch.Tensor", "torch.nn.functional", "torch.linalg", "torch.special",
              "torch.fft")

# Process-wide switches and entry points with side effects beyond their result.
STATEFUL = {
    "torch": {"set_default_dtype", "set_default_device", "set_default_tensor_type",
              "set_printoptions", "set_num_threads", "set_num_interop_threads",
              "set_flush_denormal", "set_rng_state", "manual_seed", "seed", "use_deterministic_algorithms",
              "set_deterministic_debug_mode", "set_float32_matmul_precision", "set_warn_always",
              "set_grad_enabled", "set_anomaly_enabled", "set_autocast_enabled",
              "set_autocast_dtype", "set_autocast_cache_enabled", "set_autocast_cpu_enabled",
              "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "set_autocast_ipu_enabled",
              "set_autocast_ipu_dtype", "set_autocast_xla_enabled", "set_autocast_xla_dtype",
              "clear_autocast_cache", "autocast_increment_nesting", "autocast_decrement_nesting",
              "compile", "load", "save", "set_vital", "init_num_threads", "import_ir_module",
              "import_ir_module_from_buffer", "merge_type_from_type_comment",
              "parse_ir", "parse_schema", "parse_type_comment", "unify_type_list",
              "wait", "fork", "vitals_enabled", "read_vitals", "cond", "while_loop",
              "set_default_generator", "register_custom_op"},
}

# Results whose values are not comparable between two processes: uninitialized memory,
# addresses, install paths. Their dtype/shape (or type) is still compared.
VOLATILE = {"empty", "empty_like", "empty_strided", "empty_permuted", "new_empty",
            "new_empty_strided", "resize_", "resize_as_", "data_ptr", "const_data_ptr",
            "mutable_data_ptr", "get_file_path", "storage_offset_ptr", "_cdata"}

# seconds per call: a probe that hangs is recorded as such. Generous, because a first call can
# import a lot (torch.addr's first call on ours imports upstream's decompositions: ~9 s)
_HARD_TIMEOUT = 60


def _candidates(torch):
    """Argument tuples in the order they are tried. Values are fixed (no RNG): a matrix that
    is symmetric positive definite and well conditioned, a vector, small integers."""
    f = torch.float32
    a = torch.tensor([[2.0, 0.5, 0.25], [0.5, 1.5, 0.125], [0.25, 0.125, 1.25]], dtype=f)
    v = torch.tensor([0.5, -1.25, 2.0], dtype=f)
    m = torch.tensor([[0.5, -1.0, 1.5], [2.0, -0.25, 0.75]], dtype=f)
    i = torch.tensor([2, 0, 1])
    b = torch.tensor([True, False, True])
    return [
        ("A",), ("v",), ("A", "A"), ("v", "v"), ("A", 1), ("v", 0), ("A", "v"), ("M",),
        ("A", "A", "A"), ("v", "v", "v"), ("v", 2), ("A", 0.5), ("I",), ("B",), ("B", "B"),
        ("I", "I"), ("v", "I"), ("A", 0, "I"), ([("A"), ("A")],), ([("v"), ("v")],),
        ((2, 3),), (3,), (2.0,), (), ("A", (0,)), ("A", 2, 1), ("A", "A", 0.5),
        ("M", "A"), ("v", 1, 2), ("v", "v", 0.5),
        # appended candidates never change an earlier choice: images, kernels, shapes, indices
        ("X",), ("X", "W"), ("X", 2), ("X", (2, 2)), ("A", [3]), ("A", (3,)), ("A", 0, 1),
        ("A", [1, 0]), ("A", 1, "I2"), ("A", "I2"), ("A", 0, "I2"), ("A", "A", "A", "A"),
        ("X", "X"), ("A", 1, "I2", "A"), ("A", "B3"), ("A", "B3", 0.5), ("v", 0, 1, 2),
        ("S",), ("A", [2, 1]), ((3,), 0.5), ((3, 3), 2.0), (3, 2), ("v", [3]), ("A", 3),
    ], {"A": a, "v": v, "M": m, "I": i, "B": b,
        "X": torch.arange(32, dtype=f).reshape(1, 2, 4, 4) / 16 - 1,
        "W": torch.arange(36, dtype=f).reshape(2, 2, 3, 3) / 36 - 0.5,
        "I2": torch.tensor([[0, 2, 1], [1, 0, 2], [2, 1, 0]]),
        "B3": torch.tensor([[True, False, True], [False, True, False], [True, True, False]]),
        "S": torch.tensor(1.5, dtype=f)}


def _bind(spec, env, dtype=None):
    def one(x):
        if isinstance(x, str):
            t = env[x].clone()
            if dtype is not None and t.is_floating_point():
                t = t.to(dtype)
            return t
        if isinstance(x, list):
            return [one(y) for y in x]
        return x
    return tuple(one(x) for x in spec)


def summarize(torch, value):
    """JSON of a result: tensors as dtype, shape and values (float64, with NaN/inf as strings)."""
    if isinstance(value, torch.Tensor):
        if value.layout != torch.strided:
            return {"tensor": str(value.dtype), "shape": list(value.shape), "values": None,
                    "layout": str(value.layout)}
        if value.is_complex():
            flat = torch.view_as_real(value.detach().resolve_conj()).reshape(-1)
        else:
            flat = value.detach().reshape(-1)
        vals = [_num(x) for x in flat.double().tolist()] if flat.numel() <= 4096 else None
        return {"tensor": str(value.dtype), "shape": list(value.shape), "values": vals}
    if isinstance(value, (list, tuple)):
        return {"seq": type(value).__name__, "items": [summarize(torch, x) for x in value]}
    if isinstance(value, (bool, int, str)) or value is None:
        return {"py": value}
    if isinstance(value, float):
        return {"py": _num(value)}
    if isinstance(value, complex):
        return {"py": [_num(value.real), _num(value.imag)]}
    if isinstance(value, (torch.dtype, torch.device, torch.Size, torch.layout)):
        return {"repr": str(value)}
    return {"type": type(value).__name__}


def _volatile(summary):
    if "tensor" in summary:
        return {**summary, "values": None}
    return {"type": summary.get("py").__class__.__name__} if "py" in summary else summary


def _summary(torch, value, name=""):
    try:
        s = summarize(torch, value)
        return _volatile(s) if name in VOLATILE else s
    except Exception as e:  # a result we cannot read back (the reading is what failed)
        return {"unreadable": type(e).__name__, "message": str(e).splitlines()[0][:200]}


def _num(x):
    return x if math.isfinite(x) else str(x)


def _error(e):
    return {"error": type(e).__name__, "message": str(e).splitlines()[0][:200] if str(e) else ""}


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout()


def _call(fn, args):
    import torch

    # the same generator state before every call: random results compare value for value
    torch.manual_seed(0)
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(_HARD_TIMEOUT)
    try:
        return fn(*args)
    finally:
        signal.alarm(0)


def public_names(torch, ns: str) -> dict:
    """name -> kind ('callable', 'class', 'module', 'value') for a namespace's public names."""
    import importlib
    import inspect
    import types

    obj = torch.Tensor if ns == "torch.Tensor" else importlib.import_module(ns)
    out = {}
    for name in sorted(dir(obj)):
        if name.startswith("_"):
            continue
        try:
            v = getattr(obj, name)
        except Exception:  # a property that refuses on the class
            out[name] = "value"
            continue
        if isinstance(v, types.ModuleType):
            out[name] = "module"
        elif inspect.isclass(v):
            out[name] = "class"
        elif callable(v):
            out[name] = "callable"
        else:
            out[name] = "value"
    return out


def _target(torch, ns, name, env):
    """The callable and whether it is a method bound on the first candidate tensor."""
    import importlib

    if ns == "torch.Tensor":
        return getattr(torch.Tensor, name), True
    return getattr(importlib.import_module(ns), name), False


def probe_namespace(torch, ns: str, plan: dict | None) -> dict:
    cands, env = _candidates(torch)
    out = {}
    for name, kind in public_names(torch, ns).items():
        if name in STATEFUL.get(ns, ()):
            out[name] = {"kind": kind, "skipped": "changes process state"}
            continue
        if kind != "callable" or (ns == "torch.Tensor" and isinstance(
                getattr(torch.Tensor, name, None), property)):
            out[name] = {"kind": kind}
            continue
        fn, method = _target(torch, ns, name, env)
        order = range(len(cands)) if plan is None else [plan.get(name, {}).get("candidate", 0)]
        first_error = None
        rec = {"kind": kind}
        for k in order:
            spec = cands[k]
            if method and not spec:
                continue
            args = _bind(spec, env)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    value = _call(fn, args)
            except _Timeout:
                rec.update(candidate=k, result={"error": "Timeout", "message": ""})
                break
            except Exception as e:  # the probe records what was raised
                if first_error is None:
                    first_error = (k, _error(e))
                continue
            rec.update(candidate=k, result=_summary(torch, value, name))
            if plan is None:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        rec["float64"] = _summary(torch, _call(fn, _bind(spec, env,
                                                                         torch.float64)), name)
                except Exception as e:  # no float64 reference for this one
                    rec["float64"] = _error(e)
            break
        else:
            if first_error is not None:
                rec.update(candidate=first_error[0], result=first_error[1])
        out[name] = rec
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plan", help="upstream's probe JSON: call the candidate it chose")
    ap.add_argument("--namespaces", default=",".join(NAMESPACES))
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import torch

    plan = json.load(open(args.plan)) if args.plan else None
    result = {}
    for ns in args.namespaces.split(","):
        result[ns] = probe_namespace(torch, ns, plan[ns] if plan else None)
    with open(args.out, "w") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
