"""Shared machinery of the kernel test files that replay snippet cases on upstream torch and on
ours (test_kernels_nn.py, test_kernels_core_rest.py).

A case is (name, family, setup, expression, flags); flags: ``trace`` (also compare the operators
__torch_dispatch__ sees), ``seed`` (manual_seed(0) first), ``nograd``, ``exact`` (no float64
rerun). Both interpreters execute ``HARNESS``; upstream runs every case once per session in its
own dtype and again with floating inputs widened to float64, which measures upstream's own
error. Per (family, dtype) the tolerance is derived from that error (``golden.tolerance``); a
value passes by the golden harness's own rule (``compare.close``): within it of upstream's
(widened by how far upstream's own result moves under this machine's other CPU profiles,
``upstream.CPU_PROFILES``), or no farther from the float64 answer than upstream's own. Integers, booleans, shapes, dtypes, strides, NaN/inf positions, raised
exception types and messages compare exactly.
"""

from __future__ import annotations

import json

import numpy as np

from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp, tolerance

# ------------------------------------------------------------------------------ shared harness
# Executed verbatim by both interpreters.

HARNESS = r'''
import zlib
import numpy as np

class Mk:
    """Inputs from a RandomState seeded by the case name; ``high`` widens floats to float64."""

    def __init__(self, T, name, high):
        self.T, self.high = T, high
        self.rng = np.random.RandomState(zlib.crc32(name.encode()) & 0x7FFFFFFF)

    def dt(self, dtype):
        d = getattr(self.T, dtype) if isinstance(dtype, str) else dtype
        if self.high and d.is_floating_point:
            return self.T.float64
        if self.high and d.is_complex:
            return self.T.complex128
        return d

    def _fin(self, a, dtype):
        T = self.T
        d = getattr(T, dtype) if isinstance(dtype, str) else dtype
        t = T.from_numpy(a.copy(order="C")).to(d)
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


def grads(T, mk, fn, *inputs):
    """fn(*inputs), then the gradients of <fn(*inputs), w> for random weights w."""
    out = fn(*inputs)
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,))
            if isinstance(o, T.Tensor) and o.requires_grad]
    ws = [mk.randn(*o.shape, dtype=str(o.dtype).rsplit(".", 1)[-1]) for o in outs]
    T.autograd.backward(outs, ws)
    return [out] + [x.grad for x in inputs]


def enc(v, T, arrays):
    if isinstance(v, T.Tensor):
        dt = str(v.dtype).rsplit(".", 1)[-1]
        x = v.detach()
        if dt.startswith("complex") and x.is_conj():
            x = x.resolve_conj()
        if dt in ("float16", "bfloat16") or dt.startswith("float8"):
            vals = x.to(T.float32).numpy().astype(np.float64)
        else:
            vals = np.array(x.numpy())
        key = "a%d" % len(arrays)
        arrays[key] = vals
        return {"T": "tensor", "dtype": dt, "shape": list(v.shape), "stride": list(v.stride()),
                "data": key}
    if isinstance(v, (tuple, list)):
        return {"T": "seq", "v": [enc(x, T, arrays) for x in v]}
    if v is None:
        return {"T": "none"}
    if isinstance(v, (bool, int, float, str)):
        return {"T": "py", "v": v}
    return {"T": "other", "v": repr(type(v))}


def run_case(T, F, case, high, arrays, tracer):
    name, family, setup, expr, flags = case
    mk = Mk(T, name, high)
    ns = {"T": T, "F": F, "np": np, "mk": mk}
    ns["grads"] = lambda fn, *xs: grads(T, mk, fn, *xs)
    try:
        exec(setup, ns)
        if "seed" in flags:
            T.default_generator.manual_seed(0)
        with T.no_grad() if "nograd" in flags else T.enable_grad():
            if "trace" in flags and not high:
                with tracer() as ops:
                    v = eval(expr, ns)
                return {"T": "traced", "ops": list(ops), "v": enc(v, T, arrays)}
            return enc(eval(expr, ns), T, arrays)
    except Exception as e:  # noqa: BLE001 - the exception is the result
        import traceback
        where = traceback.extract_tb(e.__traceback__)[-1].filename
        return {"T": "exc", "type": type(e).__name__, "msg": str(e), "where": where}
'''

UPSTREAM = r'''
import json, sys, contextlib, warnings
import numpy as np
import torch as T
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

warnings.simplefilter("ignore")

class Rec(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))

@contextlib.contextmanager
def tracer():
    r = Rec()
    with r:
        yield r.ops

exec(open(sys.argv[1]).read())
cases = json.load(open(sys.argv[2]))
arrays, out = {}, {}
low_only = len(sys.argv) > 4 and sys.argv[4] == "low"
for case in cases:
    low = run_case(T, F, case, False, arrays, tracer)
    high = run_case(T, F, case, True, arrays, tracer) \
        if low["T"] != "exc" and "exact" not in case[4] and not low_only else None
    out[case[0]] = {"low": low, "high": high}
np.savez(sys.argv[3], **arrays)
print(json.dumps(out))
'''


# ------------------------------------------------------------------------------ running


class Recorder:
    """A __torch_dispatch__ mode on our dispatch stack that records operator names."""

    def __init__(self):
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))

    def __enter__(self):
        from torchnative.csrc.dispatch import python_dispatch

        python_dispatch.push_on_torch_dispatch_stack(self)
        return self.ops

    def __exit__(self, *exc):
        from torchnative.csrc.dispatch import python_dispatch

        python_dispatch.pop_torch_dispatch_stack()
        return False


def leaves(d, arrays):
    if d["T"] == "tensor":
        yield d, arrays[d["data"]]
    elif d["T"] == "seq":
        for x in d["v"]:
            yield from leaves(x, arrays)
    elif d["T"] == "traced":
        yield from leaves(d["v"], arrays)


def flat(d):
    if d["T"] == "seq":
        for x in d["v"]:
            yield from flat(x)
    elif d["T"] == "traced":
        yield from flat(d["v"])
    else:
        yield d


def float64_tol(pairs32, factor=2):
    """float64 has no wider rerun to rescue an element by, so its bound is the worst of
    upstream's float32 error (not P90), in units of eps (rounding error scales with eps, relative
    and absolute alike), times ``factor`` (2: |ours - upstream| <= |ours - exact| +
    |upstream - exact|)."""
    base = tolerance.floor("float64")
    ratio = np.finfo(np.float64).eps / np.finfo(np.float32).eps
    if not pairs32:
        return base
    low = np.concatenate([p[0].ravel() for p in pairs32])
    high = np.concatenate([p[1].ravel() for p in pairs32])
    keep = np.isfinite(low) & np.isfinite(high)
    err, mag = np.abs(low - high)[keep], np.abs(high)[keep]
    rtol = tolerance.derive(pairs32, "float32").rtol
    atol = float(np.max(err - rtol * mag, initial=0.0))
    return tolerance.Tol(max(factor * rtol * ratio, base.rtol),
                         max(factor * atol * ratio, base.atol),
                         f"{factor} x upstream's float32 error bound in eps units", int(low.size))


def _prefixed(d, prefix):
    """An encoded result whose array keys carry ``prefix``."""
    if isinstance(d, dict):
        return {k: (prefix + v if k == "data" else _prefixed(v, prefix)) for k, v in d.items()}
    if isinstance(d, list):
        return [_prefixed(x, prefix) for x in d]
    return d


class Golden:
    """One test module's cases: upstream's results (``run_upstream``, once per module), ours
    (``ours``), and the judgement (``compare``). ``f64_factor``: families whose float64 bound
    takes a larger multiple of upstream's float32 error (documented where they are listed)."""

    def __init__(self, cases: list, f64_factor: dict | None = None):
        self.cases = cases
        self.f64_factor = f64_factor or {}
        self._tols: dict = {}
        self._ns: dict = {}

    def run_upstream(self, tmp_path_factory, label: str):
        d = tmp_path_factory.mktemp(label)
        (d / "harness.py").write_text(HARNESS)
        (d / "cases.json").write_text(json.dumps(self.cases))
        (d / "up.py").write_text(UPSTREAM)
        proc = upstream.run_script(d / "up.py", str(d / "harness.py"), str(d / "cases.json"),
                                   str(d / "arrays.npz"))
        doc = json.loads(proc.stdout.strip().splitlines()[-1])
        with np.load(d / "arrays.npz") as z:
            arrays = {k: z[k] for k in z.files}
        # upstream again as it computes on this machine's other CPU capabilities: each case's
        # "others" are those results, their arrays stored under a per-profile prefix
        for name, env in upstream.other_cpu_profiles().items():
            proc = upstream.run_script(d / "up.py", str(d / "harness.py"), str(d / "cases.json"),
                                       str(d / f"arrays_{name}.npz"), "low", env=env)
            other = json.loads(proc.stdout.strip().splitlines()[-1])
            with np.load(d / f"arrays_{name}.npz") as z:
                arrays.update({f"{name}:{k}": z[k] for k in z.files})
            for case, res in other.items():
                doc[case].setdefault("others", []).append(_prefixed(res["low"], f"{name}:"))
        return doc, arrays

    def ours(self, case_):
        import torch
        import torch.nn.functional as F

        if not self._ns:
            exec(HARNESS, self._ns)
        arrays: dict = {}
        return self._ns["run_case"](torch, F, case_, False, arrays, Recorder), arrays

    def tol(self, golden, family, dtype):
        """The derived tolerance of (family, dtype): upstream's own error against its float64
        rerun over every case of the family; float64 carries float32's, scaled by eps."""
        key = (family, dtype)
        if key in self._tols:
            return self._tols[key]
        doc, arrays = golden
        real = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
        src = "float32" if real == "float64" else real
        pairs = []
        for name, fam, *_ in self.cases:
            r = doc[name]
            if fam != family or r["high"] is None:
                continue
            for (lo, la), (hi, ha) in zip(leaves(r["low"], arrays), leaves(r["high"], arrays)):
                if lo["dtype"] in (src, {"float32": "complex64"}.get(src)) and \
                        la.shape == ha.shape:
                    pairs.append((tolerance.real_view(la), tolerance.real_view(ha)))
        t = tolerance.derive(pairs, src)
        if real == "float64":
            t = float64_tol(pairs, self.f64_factor.get(family, 2))
        self._tols[key] = t
        return t

    def compare(self, golden, family, up, ours, ours_arrays, high, others=()):
        """``others``: upstream's results for the same case under this machine's other CPU
        profiles; an element may sit as far from upstream as upstream sits from itself there."""
        doc, arrays = golden
        assert ours["T"] == up["T"], f"ours {ours} where upstream {up}"
        if up["T"] == "exc":
            assert (ours["type"], ours["msg"]) == (up["type"], up["msg"]), ours.get("where")
            return
        if up["T"] == "traced":
            assert ours["ops"] == up["ops"], "dispatched operators differ"
        if up["T"] in ("py", "none", "other"):
            assert ours == up
        ul = list(leaves(up, arrays))
        ol = list(leaves(ours, ours_arrays))
        hl = list(leaves(high, arrays)) if high is not None else [(None, None)] * len(ul)
        pl = [list(leaves(p, arrays)) for p in others if p["T"] == up["T"]]
        pl = [p for p in pl if len(p) == len(ul)]
        assert len(ul) == len(ol), "a different number of tensors"
        assert [x["T"] for x in flat(ours)] == [x["T"] for x in flat(up)], "structure differs"
        for j, ((ud, ua), (od, oa), (_hd, ha)) in enumerate(zip(ul, ol, hl)):
            assert (od["dtype"], od["shape"], od["stride"]) == \
                (ud["dtype"], ud["shape"], ud["stride"])
            if ua.dtype.kind not in "fc":
                np.testing.assert_array_equal(oa, ua)
                continue
            u, o = tolerance.real_view(ua), tolerance.real_view(oa)
            for test in (np.isnan, np.isposinf, np.isneginf):
                np.testing.assert_array_equal(test(o), test(u),
                                              err_msg=f"{test.__name__} positions")
            t = self.tol(golden, family, ud["dtype"])
            refs = {f"other{i}": tolerance.real_view(p[j][1]) for i, p in enumerate(pl)
                    if p[j][1].shape == ua.shape and p[j][1].dtype == ua.dtype}
            h = tolerance.real_view(ha) if ha is not None and ha.shape == ua.shape else None
            why = cmp.close(u, o, h, cmp.spread(u, refs, ud["dtype"]), t)
            assert why is None, f"{why} ({t.source})"
