"""The one prelude both interpreters run around a differential case.

Upstream imports this file from its own process (``sides.program`` puts this folder on its path;
the behaviour scripts put it there themselves) and ours imports it in the test process
(tests/differential/conftest.py), so each side builds inputs, captures errors and encodes
results with the same code. It imports only torch and numpy: loading it must not pull our
package into upstream's interpreter (the upstream guard stops a process that does).

What it holds, by use:

- errors: ``failure`` (an exception as a record), ``err`` (what a call raised, as text);
- results: ``encode`` (one encoding of tensors, sequences and Python values: values inline, as
  the hex of their bytes, or in a side table that travels as .npz), ``tensors`` (its tensor
  records) and ``decode`` (their values back as numpy), ``vals`` / ``edges`` (behaviour-script views);
- inputs: ``seeded``, ``Maker`` (seeded by the case's name, with the float64 rerun's widening);
- runners: ``run_case`` (a snippet case), ``case`` / ``error`` (a function over numpy inputs in
  both widths plus the float64 rerun), ``outcome`` / ``probe`` (a call's or an expression's
  exact record), ``evaluate`` (statements ending in an expression, with their warnings), ``run_cases``
  and ``main`` (a behaviour script's cases), ``replay`` (upstream's side of the snippet cases);
- ``tracing``: the operators ``__torch_dispatch__`` sees.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys
import traceback
import warnings
import zlib

import numpy as np
import torch
import torch.nn.functional as F

_TRUNCATED = ("float16", "bfloat16")


# ------------------------------------------------------------------------------------- errors
def failure(e: BaseException, first_line: bool = False) -> dict:
    """An exception as the record compared across sides: its type name and message (or the
    message's first line, where an internal assertion keeps only its text: upstream's names its
    C++ source file)."""
    msg = str(e)
    if first_line:
        msg = msg.split("\n")[0]
        if "INTERNAL ASSERT FAILED" in msg:
            msg = msg.split(" INTERNAL ASSERT FAILED")[0]
    return {"error": type(e).__name__, "message": msg}


def err(fn) -> str:
    """What calling ``fn`` raised, as "Type: message" (or "no error")."""
    try:
        fn()
    except Exception as e:  # the case records what was raised
        return f"{type(e).__name__}: {e}"
    return "no error"


# ------------------------------------------------------------------------------------ results
def _short(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _array(x: torch.Tensor) -> np.ndarray:
    """A detached tensor's values as numpy: conjugate/negative views resolved, half and bfloat16
    (and float8) widened to float64 exactly."""
    if x.is_complex() and x.is_conj():
        x = x.resolve_conj()
    d = _short(x.dtype)
    if d in _TRUNCATED or d.startswith("float8"):
        return x.to(torch.float32).numpy().astype(np.float64)
    return np.array(x.numpy())


def _inline(a: np.ndarray):
    """JSON-ready values: complex as [re, im] pairs on a last axis, floats as float64."""
    if a.dtype.kind == "c":
        a = np.stack([a.real, a.imag], axis=-1)
    if a.dtype.kind == "f":
        a = a.astype(np.float64)
    return a.tolist()


def _bits(x: torch.Tensor) -> str:
    """A detached tensor's values as the hex of its bytes, C order (bfloat16 as its 16 bits)."""
    x = x.resolve_conj().resolve_neg()
    if x.dtype == torch.bfloat16:
        x = x.view(torch.int16)
    return np.ascontiguousarray(x.numpy()).tobytes().hex()


def encode(v, arrays: dict | None = None, bits: bool = False):
    """One encoding for every result. A tensor records its class, dtype, shape, stride and device
    and its values (none for a meta tensor): into ``arrays`` under a fresh key when a side table
    is given (it travels as .npz), as the hex of its bytes with ``bits`` (bit for bit, NaN
    payloads included), else inline as JSON numbers (``values``). Sequences and dicts nest;
    Python scalars record their type and repr (so True is not 1 and NaN equals NaN); anything
    else its type's name. ``decode`` reads a tensor's values back."""
    if isinstance(v, torch.Tensor):
        out = {"T": "tensor", "class": type(v).__name__, "dtype": _short(v.dtype),
               "shape": list(v.shape), "stride": list(v.stride()), "device": str(v.device)}
        if v.device.type == "meta":
            return out
        if bits:
            out["hex"] = _bits(v.detach())
        elif arrays is None:
            out["values"] = _inline(_array(v.detach()))
        else:
            out["data"] = key = "a%d" % len(arrays)
            arrays[key] = _array(v.detach())
        return out
    if isinstance(v, (tuple, list)):
        return {"T": "seq", "v": [encode(x, arrays, bits) for x in v]}
    if isinstance(v, dict):
        return {"T": "map", "v": {str(k): encode(x, arrays, bits) for k, x in v.items()}}
    if v is None:
        return {"T": "none"}
    if isinstance(v, str):
        return {"T": "py", "type": "str", "v": v}
    if isinstance(v, (bool, int, float, complex)):
        return {"T": "py", "type": type(v).__name__, "v": repr(v)}
    return {"T": "other", "v": type(v).__name__}


def tensors(enc):
    """The tensor records of an encoded result, in order (through sequences, dicts and a traced
    case's value)."""
    kind = enc.get("T") if isinstance(enc, dict) else None
    if kind == "tensor":
        yield enc
    elif kind == "seq":
        for x in enc["v"]:
            yield from tensors(x)
    elif kind == "map":
        for x in enc["v"].values():
            yield from tensors(x)
    elif kind == "traced":
        yield from tensors(enc["v"])


_FROM_BITS = {"bfloat16": np.int16, "float16": np.float16, "float32": np.float32,
              "float64": np.float64, "complex64": np.complex64, "complex128": np.complex128,
              "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
              "int32": np.int32, "int64": np.int64}


def decode(leaf: dict, arrays: dict | None = None) -> np.ndarray:
    """An encoded tensor's values as numpy, in its shape: floats as float64 (bfloat16 from its
    bits), complex as complex128, integers and bools as they are."""
    if "data" in leaf:
        a = arrays[leaf["data"]]
    elif "hex" in leaf:
        a = np.frombuffer(bytes.fromhex(leaf["hex"]), dtype=_FROM_BITS[leaf["dtype"]])
        if leaf["dtype"] == "bfloat16":
            a = (a.astype(np.uint16).astype(np.uint32) << 16).view(np.float32)
        a = a.reshape(leaf["shape"])
    else:
        a = np.array(leaf["values"])
        if leaf["dtype"].startswith("complex"):
            a = a.astype(np.float64).reshape(list(leaf["shape"]) + [2])
            return a[..., 0] + 1j * a[..., 1]
        a = a.reshape(leaf["shape"])
    if a.dtype.kind == "c":
        return a.astype(np.complex128)
    return a.astype(np.float64) if a.dtype.kind == "f" else a


def vals(t):
    """A tensor's values as a flat float64 list (None for None)."""
    return None if t is None else t.detach().double().reshape(-1).tolist()


def edges(fn) -> list:
    """A graph node's next_functions as [name, input_nr] pairs."""
    return [[None if n is None else n.name(), i] for n, i in fn.next_functions]


# ------------------------------------------------------------------------------------- inputs
def seeded(name: str) -> np.random.RandomState:
    """A RandomState seeded by a case's name: the same inputs on both sides, case by case."""
    return np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)


def _wide(t):
    """A float64 rerun's input: floating and complex tensors widened, the rest as they are."""
    if isinstance(t, torch.Tensor) and t.is_complex():
        return t.to(torch.complex128)
    if isinstance(t, torch.Tensor) and t.is_floating_point():
        return t.to(torch.float64)
    return t


class Maker:
    """A case's inputs from a RandomState seeded by its name; ``high`` (the float64 rerun) widens
    floating inputs to float64/complex128 after drawing them in their own dtype."""

    def __init__(self, name, high):
        self.high = high
        self.rng = seeded(name)

    def dt(self, dtype):
        d = getattr(torch, dtype) if isinstance(dtype, str) else dtype
        if self.high and d.is_floating_point:
            return torch.float64
        if self.high and d.is_complex:
            return torch.complex128
        return d

    def _fin(self, a, dtype):
        d = getattr(torch, dtype) if isinstance(dtype, str) else dtype
        t = torch.from_numpy(a.copy(order="C")).to(d)
        return t.to(self.dt(d)) if self.high else t

    def _floats(self, a, dtype):
        d = str(dtype)
        if "complex" in d:
            return a.astype(np.complex128 if "128" in d else np.complex64)
        return a.astype(np.float64 if "float64" in d else np.float32)

    def randn(self, *shape, dtype="float32"):
        a = np.asarray(self.rng.randn(*shape))
        if "complex" in str(dtype):
            a = a + 1j * np.asarray(self.rng.randn(*shape))
        return self._fin(self._floats(a, dtype), dtype)

    def rand(self, *shape, dtype="float32"):
        return self._fin(self._floats(self.rng.rand(*shape), dtype), dtype)

    def randint(self, lo, hi, shape, dtype="int64"):
        return self._fin(self.rng.randint(lo, hi, size=shape).astype(np.int64), dtype)

    def tensor(self, data, dtype=None):
        """Python data as a tensor: ints stay int64 and bools bool unless a dtype is given."""
        a = np.array(data)
        if dtype is None:
            dtype = {"i": "int64", "u": "int64", "b": "bool"}.get(a.dtype.kind, "float32")
        if a.dtype.kind in "iub":
            a = a.astype(np.int64 if a.dtype.kind != "b" else np.bool_)
        else:
            a = self._floats(a, dtype)
        return self._fin(a, dtype)


def grads(mk, fn, *inputs):
    """fn(*inputs), then the gradients of <fn(*inputs), w> for random weights w."""
    out = fn(*inputs)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
            if isinstance(o, torch.Tensor) and o.requires_grad]
    ws = [mk.randn(*o.shape, dtype=_short(o.dtype)) for o in outs]
    torch.autograd.backward(outs, ws)
    return [out] + [x.grad for x in inputs]


# ------------------------------------------------------------------------------------ tracing
@contextlib.contextmanager
def tracing():
    """The names of the operators ``__torch_dispatch__`` sees inside the block."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log() as log:
        yield log.ops


@contextlib.contextmanager
def function_tracing():
    """The names of the functions ``__torch_function__`` modes see inside the block."""
    from torch.overrides import TorchFunctionMode

    class Log(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.names = []

        def __torch_function__(self, func, types, args=(), kwargs=None):
            self.names.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    with Log() as log:
        yield log.names


# ------------------------------------------------------------------------------ snippet cases
def run_case(case, high, arrays):
    """One snippet case (name, family, setup, expression, flags) as its encoded result, or its
    exception. flags: ``trace`` (also the operators dispatched), ``seed`` (manual_seed(0)
    first), ``nograd``, ``exact`` (no float64 rerun). ``high``: the float64 rerun."""
    name, family, setup, expr, flags = case
    mk = Maker(name, high)
    ns = {"T": torch, "F": F, "np": np, "mk": mk, "grads": lambda fn, *xs: grads(mk, fn, *xs)}
    try:
        exec(setup, ns)
        if "seed" in flags:
            torch.default_generator.manual_seed(0)
        with torch.no_grad() if "nograd" in flags else torch.enable_grad():
            if "trace" in flags and not high:
                with tracing() as ops:
                    v = eval(expr, ns)
                return {"T": "traced", "ops": list(ops), "v": encode(v, arrays)}
            return encode(eval(expr, ns), arrays)
    except Exception as e:  # noqa: BLE001 - the exception is the result
        where = traceback.extract_tb(e.__traceback__)[-1].filename
        return {"T": "exc", **failure(e), "where": where}


def replay(cases_path, arrays_path, low_only=False) -> dict:
    """Upstream's side of the snippet cases: each case, then (unless it raised, is ``exact`` or
    ``low_only``) its float64 rerun; arrays saved to ``arrays_path``."""
    warnings.simplefilter("ignore")
    with open(cases_path) as f:
        cases = json.load(f)
    arrays, out = {}, {}
    for case in cases:
        low = run_case(case, False, arrays)
        high = run_case(case, True, arrays) \
            if low["T"] != "exc" and "exact" not in case[4] and not low_only else None
        out[case[0]] = {"low": low, "high": high}
    np.savez(arrays_path, **arrays)
    return out


# ---------------------------------------------------------------- functions over numpy inputs
RESULTS: dict = {}


def _record(fn, args) -> dict:
    try:
        r = fn(*args)
        if not isinstance(r, (torch.Tensor, tuple, list)):
            r = torch.tensor(r)
        return encode(r)
    except Exception as e:
        return failure(e)


def case(name, fn, *arrays, widen=True):
    """fn on tensors made from numpy arrays, in float32 and float64 (complex64 and complex128
    when an array is complex) into ``RESULTS["<name>.float32"]`` / ``[".float64"]``, plus the
    float32 inputs widened to float64 (``"<name>.float32@64"``), upstream's reference run."""
    cplx = any(np.iscomplexobj(a) for a in arrays if isinstance(a, np.ndarray))
    kinds = ("complex64", "complex128") if cplx else ("float32", "float64")
    for dt in kinds:
        tens = [torch.tensor(a, dtype=getattr(torch, dt)) if isinstance(a, np.ndarray) and
                a.dtype.kind in "fc" else (torch.tensor(a) if isinstance(a, np.ndarray) else a)
                for a in arrays]
        key = f"{name}.{'float32' if dt in ('float32', 'complex64') else 'float64'}"
        RESULTS[key] = _record(fn, tens)
        if widen and dt in ("float32", "complex64"):
            RESULTS[key + "@64"] = _record(fn, [_wide(t) for t in tens])


def error(name, fn):
    """What ``fn()`` raises, into ``RESULTS[name]`` ("none" when it computes)."""
    try:
        fn()
        RESULTS[name] = {"error": "none", "message": "computed"}
    except Exception as e:
        RESULTS[name] = failure(e)


# --------------------------------------------------------------------------- exact expressions
def outcome(fn, bits: bool = False):
    """``fn()``'s record (``encode``), or its error's type and first line."""
    try:
        return encode(fn(), bits=bits)
    except Exception as e:  # the error itself is what is compared
        return failure(e, first_line=True)


def probe(expr: str, ns: dict):
    """An expression's exact record (evaluated in ``ns``), or its error's type and first line."""
    return outcome(lambda: eval(expr, ns))


def evaluate(src: str, ns: dict, bits: bool = True, warn: bool = True, **globals_) -> dict:
    """A case written as statements whose last line is an expression, run in a copy of ``ns``:
    {"ok": its encoding} or its error (type and first line); with ``warn``, also the warnings it
    raised ("warnings", their first sentence). ``globals_`` are set in ``ns`` itself for the
    call (what ns's own functions read, such as a float64-rerun switch) and restored after."""
    saved = {k: ns[k] for k in globals_ if k in ns}
    ns.update(globals_)
    lines = src.split("\n")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always" if warn else "ignore")
            try:
                local = dict(ns)
                exec("\n".join(lines[:-1]), local)
                out = {"ok": encode(eval(lines[-1], local), bits=bits)}
            except Exception as e:  # the error is the case's result
                out = failure(e, first_line=True)
    finally:
        for k in globals_:
            ns.pop(k, None)
        ns.update(saved)
    if warn:
        out["warnings"] = sorted({str(w.message).split(" (Triggered internally")[0]
                                  for w in caught})
    return out


def attempt(name: str, fn, show=repr) -> list:
    """``[name, "ok", show(result)]`` or ``[name, error type, message]`` of ``fn()``, then the
    warnings it raised (without upstream's note of where in its build)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            rec = [name, "ok", show(fn())]
        except Exception as e:  # the error is the case's result
            rec = [name, type(e).__name__, str(e)]
    rec.append([str(w.message).split(" (Triggered internally")[0] for w in caught])
    return rec


# -------------------------------------------------------------------------- behaviour scripts
def run_cases(cases: dict, after=None) -> dict:
    """Every case's result; an exception escaping a case is its result too. ``after`` runs after
    each case (restoring global state a case may leave behind)."""
    r = {}
    for name, fn in cases.items():
        try:
            r[name] = fn()
        except Exception as e:
            r[name] = f"EXC {type(e).__name__}: {e}"
        finally:
            if after is not None:
                after()
    return r


def main(probes, quiet: bool = False) -> None:
    """A behaviour script's entry point: one JSON object, case name -> result, on stdout
    (``quiet``: with warnings ignored, as the test runs ours)."""
    if quiet:
        warnings.simplefilter("ignore")
    print(json.dumps(probes(torch)))


__all__ = ["json", "math", "np", "sys", "torch", "F", "warnings", "failure", "err", "encode",
           "decode", "tensors", "vals", "edges", "seeded", "Maker", "grads", "tracing", "run_case", "replay",
           "RESULTS", "case", "error", "outcome", "probe", "evaluate", "attempt", "run_cases", "main"]


# -- programs that print reductions' raw bytes (harness/order_programs.py runs them) ----------

class OrderProgram:
    """The command line and the record of such a program: ``--threads N`` sets the intra-op
    threads, ``--suite quick|slow`` is ``quick``; ``record`` keeps a value's raw bytes under a
    name, ``finish`` prints the one JSON document ({"threads", "capability", "cases"})."""

    def __init__(self):
        import argparse

        p = argparse.ArgumentParser()
        p.add_argument("--threads", type=int, default=0)
        p.add_argument("--suite", default="quick")
        args = p.parse_args()
        if args.threads:
            torch.set_num_threads(args.threads)
        self.quick = args.suite == "quick"
        self.cases = []

    def record(self, name, t):
        a = t.detach().contiguous()
        if a.dtype == torch.bfloat16:
            a = a.view(torch.int16)
        self.cases.append([name, a.numpy().tobytes().hex()])

    def finish(self):
        print(json.dumps({"threads": torch.get_num_threads(),
                          "capability": torch.backends.cpu.get_cpu_capability(),
                          "cases": self.cases}))
