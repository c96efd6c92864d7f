"""The CPU generator (torchnative.csrc.random) against upstream torch 2.13.0, bit for bit.

Upstream runs once per session in its own environment (``testing.upstream.run_script``). Every
case is a sequence of calls on one generator seeded per case, so the stream position (and the
cached Box-Muller sample) carries from call to call exactly as upstream's does; results travel
as raw bytes and are compared with ``np.array_equal`` on the bits.

Where upstream disagrees with itself across CPUs: ``normal_`` on >= 16 float32 values and
``uniform_(a, b)`` depend on the capability upstream dispatches to (AVX2 and AVX512 run the AVX2
Box-Muller and a fused multiply-add; DEFAULT runs glibc's scalar functions and no fused
multiply-add). Ours follows the capability in force (docs/cpu.md), so no tolerance is accepted
anywhere; ``test_random_kernels_per_capability`` checks every capability this CPU can run.
"""

from __future__ import annotations

import json
import os
import subprocess
from fractions import Fraction

import numpy as np
import pytest

from torchnative.csrc import random as R
from torchnative.csrc.random import dtypes as D
from torchnative.csrc.random.fpmath import fma32, fma64
from torchnative.testing import upstream

FLOATS = ["float32", "float64", "float16", "bfloat16"]
INTS = ["bool", "uint8", "int8", "int16", "int32", "int64"]
SIZES = [1, 7, 15, 16, 17, 1000, (3, 5), (4, 33)]
SEEDS = [0, 1, 42, 2**63 + 12345, -7]

# ------------------------------------------------------------------------- the upstream side

UPSTREAM_SCRIPT = r'''
import json, sys
import numpy as np
import torch
import torch.nn.functional as F

spec = json.load(open(sys.argv[1]))
inp = np.load(sys.argv[2])
DT = {n: getattr(torch, n) for n in ["float32", "float64", "float16", "bfloat16", "bool", "uint8",
                                      "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64"]}

def arr(v):
    a = inp[v["npz"]].copy()
    if v.get("dtype") == "bfloat16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a)

def shp(s):
    return (s,) if isinstance(s, int) else tuple(s)

def with_default(g, fn):
    torch.default_generator.set_state(g.get_state())
    r = fn()
    g.set_state(torch.default_generator.get_state())
    return r

def run(fn, kw, g):
    e = lambda: torch.empty(shp(kw["shape"]), dtype=DT[kw["dtype"]])
    if fn == "random":
        if "from_" not in kw and "to" not in kw:
            return e().random_(generator=g)
        if "from_" not in kw:
            return e().random_(kw["to"], generator=g)
        return e().random_(kw["from_"], kw.get("to"), generator=g)
    if fn == "randint":
        return torch.randint(kw["low"], kw["high"], shp(kw["shape"]), dtype=DT[kw["dtype"]], generator=g)
    if fn == "uniform":
        return e().uniform_(kw["a"], kw["b"], generator=g)
    if fn == "rand":
        return torch.rand(shp(kw["shape"]), dtype=DT[kw["dtype"]], generator=g)
    if fn == "normal":
        return e().normal_(kw["mean"], kw["std"], generator=g)
    if fn == "normal_strided":  # a transposed (non-contiguous) view takes the scalar path
        t = torch.empty(tuple(reversed(shp(kw["shape"]))), dtype=DT[kw["dtype"]]).t()
        t.normal_(kw["mean"], kw["std"], generator=g)
        return t.t().contiguous()  # memory order == TensorIterator order here
    if fn == "randn":
        return torch.randn(shp(kw["shape"]), dtype=DT[kw["dtype"]], generator=g)
    if fn == "bernoulli":
        p = kw["p"] if not isinstance(kw["p"], dict) else arr(kw["p"])
        return e().bernoulli_(p, generator=g)
    if fn == "bernoulli_fn":  # torch.bernoulli(probs): result dtype = probs dtype
        return torch.bernoulli(arr(kw["p"]), generator=g)
    if fn == "exponential":
        return e().exponential_(kw["lambd"], generator=g)
    if fn == "geometric":
        return e().geometric_(kw["p"], generator=g)
    if fn == "cauchy":
        return e().cauchy_(kw["median"], kw["sigma"], generator=g)
    if fn == "log_normal":
        return e().log_normal_(kw["mean"], kw["std"], generator=g)
    if fn == "randperm":
        return torch.randperm(kw["n"], dtype=DT[kw["dtype"]], generator=g)
    if fn == "multinomial":
        return torch.multinomial(arr(kw["probs"]), kw["num_samples"], kw["replacement"], generator=g)
    if fn == "dropout":
        return with_default(g, lambda: F.dropout(arr(kw["x"]), kw["p"], training=True))
    if fn == "native_dropout":
        out, mask = with_default(g, lambda: torch.native_dropout(arr(kw["x"]), kw["p"], True))
        return torch.cat([out.contiguous().view(torch.uint8).reshape(-1), mask.view(torch.uint8).reshape(-1)])
    if fn == "state":
        return g.get_state()
    raise ValueError(fn)

out = {}
for ci, case in enumerate(spec):
    g = torch.Generator()
    g.manual_seed(case["seed"])
    for oi, (fn, kw) in enumerate(case["ops"]):
        key = f"c{ci}_o{oi}"
        try:
            t = run(fn, kw, g)
            out[key] = t.contiguous().view(torch.uint8).reshape(-1).numpy()
            out[key + "_state"] = g.get_state().numpy()
        except Exception as exc:
            out[key + "_err"] = np.array(type(exc).__name__ + ": " + str(exc).splitlines()[0])
            g.manual_seed(case["seed"])  # keep going: later ops compare against a fresh stream
out["capability"] = np.array(torch.backends.cpu.get_cpu_capability())
np.savez(sys.argv[3], **out)
'''

# -------------------------------------------------------------------------------- our side


def _ours(fn, kw, g, arrays):
    def arr(v):
        a = arrays[v["npz"]]
        return a.view(D.np_dtype("bfloat16")) if v.get("dtype") == "bfloat16" else a
    s = kw.get("shape")
    if fn == "random":
        return R.random_(g, s, kw["dtype"], kw.get("from_", 0 if "to" in kw else None), kw.get("to"))
    if fn == "randint":
        return R.randint(g, kw["low"], kw["high"], s, kw["dtype"])
    if fn == "uniform":
        return R.uniform_(g, s, kw["dtype"], kw["a"], kw["b"])
    if fn == "rand":
        return R.uniform_(g, s, kw["dtype"])
    if fn == "normal":
        return R.normal_(g, s, kw["dtype"], kw["mean"], kw["std"])
    if fn == "normal_strided":
        return R.normal_(g, s, kw["dtype"], kw["mean"], kw["std"], contiguous=False)
    if fn == "randn":
        return R.normal_(g, s, kw["dtype"])
    if fn == "bernoulli":
        return R.bernoulli_(g, s, kw["dtype"], arr(kw["p"]) if isinstance(kw["p"], dict) else kw["p"])
    if fn == "bernoulli_fn":
        p = arr(kw["p"])
        return R.bernoulli_(g, p.shape, p.dtype, p)
    if fn == "exponential":
        return R.exponential_(g, s, kw["dtype"], kw["lambd"])
    if fn == "geometric":
        return R.geometric_(g, s, kw["dtype"], kw["p"])
    if fn == "cauchy":
        return R.cauchy_(g, s, kw["dtype"], kw["median"], kw["sigma"])
    if fn == "log_normal":
        return R.log_normal_(g, s, kw["dtype"], kw["mean"], kw["std"])
    if fn == "randperm":
        return R.randperm(g, kw["n"], kw["dtype"])
    if fn == "multinomial":
        return R.multinomial(g, arr(kw["probs"]), kw["num_samples"], kw["replacement"])
    if fn == "dropout":
        return R.dropout(g, arr(kw["x"]), kw["p"])
    if fn == "native_dropout":
        out, mask = R.native_dropout(g, arr(kw["x"]), kw["p"])
        return np.concatenate([np.ascontiguousarray(out).view(np.uint8).ravel(), mask.view(np.uint8).ravel()])
    if fn == "state":
        return g.get_state()
    raise ValueError(fn)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


# ------------------------------------------------------------------------------ the cases

_ARRAYS: dict[str, np.ndarray] = {}


def _array(a: np.ndarray) -> dict:
    key = f"a{len(_ARRAYS)}"
    if a.dtype == D.np_dtype("bfloat16"):
        _ARRAYS[key] = a.view(np.uint16)
        return {"npz": key, "dtype": "bfloat16"}
    _ARRAYS[key] = a
    return {"npz": key}


def _cases() -> list[dict]:
    rng = np.random.default_rng(2024)
    cases = []
    for seed in SEEDS:
        ops = []
        for s in SIZES:
            for d in FLOATS:
                ops += [("rand", dict(shape=s, dtype=d)), ("uniform", dict(shape=s, dtype=d, a=-2.5, b=7.25)),
                        ("randn", dict(shape=s, dtype=d)), ("normal", dict(shape=s, dtype=d, mean=0.3, std=2.7))]
        ops += [("uniform", dict(shape=s, dtype=d, a=a, b=b)) for d in FLOATS
                for s, a, b in [(257, -1e-3, 1e-3), (64, 0.0, 0.0), (33, 1.0, 1.0009765625), (40, -60000.0, 60000.0)]]
        ops.append(("state", {}))
        cases.append(dict(seed=seed, ops=ops))

        ops = []  # the scalar normal path and its cached sample, interleaved with other draws
        for s in [1, 1, 3, 2, 5, 15, 1]:
            ops += [("normal", dict(shape=s, dtype="float32", mean=1.5, std=0.5)), ("state", {})]
        # a zero mean or a unit std (the scalar path's own arithmetic), and counts either side of
        # the scalar path's 64 draws, with and without a cached sample
        ops += [("normal", dict(shape=7, dtype="float64", mean=0.0, std=2.7)),
                ("normal", dict(shape=5, dtype="float32", mean=-1.25, std=1.0)),
                ("normal", dict(shape=9, dtype="float64", mean=-0.0, std=1e-300)), ("state", {}),
                ("normal_strided", dict(shape=(8, 8), dtype="float64", mean=0.5, std=1.0)),
                ("normal_strided", dict(shape=(5, 13), dtype="float64", mean=0.5, std=3.0)),
                ("normal_strided", dict(shape=(2, 32), dtype="float64", mean=0.0, std=1.0)),
                ("state", {})]
        ops += [("log_normal", dict(shape=3, dtype="float64", mean=0.1, std=0.4)), ("state", {}),
                ("normal", dict(shape=16, dtype="float64", mean=0.0, std=1.0)), ("state", {}),
                ("log_normal", dict(shape=4, dtype="float32", mean=0.1, std=0.4)),
                ("normal_strided", dict(shape=(5, 7), dtype="float32", mean=-1.0, std=3.0)), ("state", {}),
                ("rand", dict(shape=3, dtype="float64")), ("normal", dict(shape=1, dtype="float16", mean=0, std=1)),
                ("state", {})]
        cases.append(dict(seed=seed, ops=ops))

        ops = []
        for s in SIZES:
            for d in INTS + FLOATS:
                ops.append(("random", dict(shape=s, dtype=d)))
            for d, lo, hi in [("int64", 0, 10), ("int64", -5, 5), ("int64", -(2**40), 2**41), ("int32", 0, 2**28),
                              ("uint8", 3, 200), ("int8", -100, 100), ("int16", -3, 2**15 - 1), ("bool", 0, 2),
                              ("float32", -2**20, 2**20), ("float16", 0, 65504), ("bfloat16", -300, 300),
                              ("float64", 0, 2**60), ("uint16", 0, 60000), ("uint32", 5, 2**32 - 1), ("uint64", 0, 2**62)]:
                ops.append(("random", dict(shape=s, dtype=d, from_=lo, to=hi)))
            ops += [("random", dict(shape=s, dtype="int64", to=1000)),
                    ("random", dict(shape=s, dtype="int64", from_=17)), ("random", dict(shape=s, dtype="uint8", from_=250)),
                    ("random", dict(shape=s, dtype="float32", from_=3)), ("random", dict(shape=s, dtype="float16", from_=-9)),
                    ("random", dict(shape=s, dtype="int64", from_=-2**63)),
                    ("random", dict(shape=s, dtype="bfloat16", from_=-2**63)),
                    ("randint", dict(low=-3, high=11, shape=s, dtype="int64"))]
        ops += [("random", dict(shape=4, dtype="uint32")), ("random", dict(shape=4, dtype="int8", from_=0, to=300)),
                ("random", dict(shape=4, dtype="int64", from_=5, to=5)), ("state", {})]
        cases.append(dict(seed=seed, ops=ops))

        ops = []
        for s in SIZES:
            for d in FLOATS + INTS:
                ops.append(("bernoulli", dict(shape=s, dtype=d, p=0.3)))
            for d in FLOATS:
                ops += [("exponential", dict(shape=s, dtype=d, lambd=1.7)), ("cauchy", dict(shape=s, dtype=d, median=0.5, sigma=2.0)),
                        ("log_normal", dict(shape=s, dtype=d, mean=0.2, std=0.7)), ("geometric", dict(shape=s, dtype=d, p=0.2))]
            ops += [("geometric", dict(shape=s, dtype=d, p=0.35)) for d in ["int64", "int32", "uint8", "int8"]]
            for pd in FLOATS:
                shape = (s,) if isinstance(s, int) else s
                p = _array(rng.uniform(0, 1, shape).astype(D.np_dtype(pd)))
                ops += [("bernoulli", dict(shape=s, dtype="float32", p=p)), ("bernoulli_fn", dict(p=p))]
        p_row = _array(rng.uniform(0, 1, (1, 6)))  # broadcast p against (4, 6)
        ops += [("bernoulli", dict(shape=(4, 6), dtype="int64", p=p_row)), ("bernoulli", dict(shape=3, dtype="uint16", p=0.5)),
                ("bernoulli", dict(shape=3, dtype="float32", p=1.5)), ("exponential", dict(shape=3, dtype="int64", lambd=1.0)),
                ("state", {})]
        cases.append(dict(seed=seed, ops=ops))

        ops = [("randperm", dict(n=n, dtype="int64")) for n in [0, 1, 2, 7, 15, 16, 17, 1000, 100000]]
        ops += [("randperm", dict(n=50, dtype=d)) for d in ["int32", "float32", "float16", "bfloat16", "uint8"]]
        ops += [("randperm", dict(n=n, dtype=d)) for n, d in [(300, "bfloat16"), (3000, "float16"), (300, "uint8"),
                                                              (-1, "int64"), (3, "bool")]]
        for shape in [(1,), (5,), (1000,), (3, 7), (4, 33)]:
            for d in ["float32", "float64", "bfloat16"]:
                probs = rng.uniform(0, 1, shape) ** 3
                probs.reshape(-1)[:: 5] = 0  # zero-probability categories
                probs.reshape(-1, shape[-1])[:, 0] += 0.01
                pa = _array(probs.astype(D.np_dtype(d)))
                nz = int((probs.reshape(-1, shape[-1]) > 0).sum(-1).min())
                for k, rep in [(1, False), (min(nz, 3), False), (nz, False), (1, True), (10, True), (257, True)]:
                    ops.append(("multinomial", dict(probs=pa, num_samples=k, replacement=rep)))
        ops += [("multinomial", dict(probs=_array(np.zeros(4)), num_samples=1, replacement=True)),
                ("multinomial", dict(probs=_array(np.ones(4, np.float16)), num_samples=1, replacement=True)),
                ("state", {})]
        for shape in [(7,), (16,), (4, 33), (1000,)]:
            for d in FLOATS:
                x = _array(rng.standard_normal(shape).astype(D.np_dtype(d)))
                ops += [("dropout", dict(x=x, p=0.1)), ("dropout", dict(x=x, p=0.5)), ("native_dropout", dict(x=x, p=0.3))]
        ops.append(("state", {}))
        cases.append(dict(seed=seed, ops=ops))

    # one long stream: catches rare rounding cases the small sizes would miss
    cases.append(dict(seed=2023, ops=[("randn", dict(shape=200000, dtype="float32")),
                                      ("uniform", dict(shape=200000, dtype="float32", a=-3.3, b=7.1)),
                                      ("uniform", dict(shape=100000, dtype="float64", a=-3.3, b=7.1)),
                                      ("normal", dict(shape=100000, dtype="float64", mean=0.25, std=1.75)),
                                      ("normal", dict(shape=100001, dtype="bfloat16", mean=0.25, std=1.75)),
                                      ("cauchy", dict(shape=50000, dtype="float64", median=0.0, sigma=1.0)),
                                      ("state", {})]))
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def upstream_results(tmp_path_factory):
    if not upstream.available():
        pytest.skip("upstream torch environment (.venv-upstream) is not set up")
    d = tmp_path_factory.mktemp("rng")
    (d / "spec.json").write_text(json.dumps(CASES))
    np.savez(d / "inputs.npz", **_ARRAYS)
    (d / "run.py").write_text(UPSTREAM_SCRIPT)
    upstream.run_script(d / "run.py", str(d / "spec.json"), str(d / "inputs.npz"), str(d / "out.npz"))
    return dict(np.load(d / "out.npz"))


def _run_case(ci: int, case: dict, results: dict, make_gen=None) -> list[str]:
    """Replay one case on our generator; return every disagreement with upstream.

    After each call both the values and the whole generator state (stream position, cached
    normal sample) must equal upstream's. After a disagreement we continue from upstream's state,
    so each reported failure is independent of the ones before it.
    """
    g = make_gen(case["seed"]) if make_gen else R.CPUGeneratorState().manual_seed(case["seed"])
    bad = []
    for oi, (fn, kw) in enumerate(case["ops"]):
        key = f"c{ci}_o{oi}"
        if bad and f"c{ci}_o{oi - 1}_state" in results:
            g.set_state(results[f"c{ci}_o{oi - 1}_state"])
        try:
            ours, err = _bits(_ours(fn, kw, g, _ARRAYS)), None
        except Exception as exc:  # noqa: BLE001 -- compared against upstream's error below
            ours, err = None, f"{type(exc).__name__}: {exc}"
        if key + "_err" in results:
            if err is None:
                bad.append(f"{key} {fn}{kw}: upstream raised {results[key + '_err']}, ours did not")
            g.manual_seed(case["seed"])
            continue
        if err is not None:
            bad.append(f"{key} {fn}{kw}: ours raised {err}")
            g.manual_seed(case["seed"])
            continue
        if not np.array_equal(ours, results[key]):
            bad.append(f"{key} {fn}{kw}: {_describe(ours, results[key], fn, kw)}")
        elif not np.array_equal(g.get_state(), results[key + "_state"]):
            bad.append(f"{key} {fn}{kw}: same values, but the generator state afterwards differs")
    return bad


def _describe(ours, theirs, fn, kw):
    if ours.size != theirs.size:
        return f"size {ours.size} bytes vs upstream {theirs.size}"
    diff = np.flatnonzero(ours != theirs)
    msg = f"{diff.size} of {ours.size} bytes differ, first at byte {diff[0]}"
    name = kw.get("dtype") or ("int64" if fn in ("randperm", "multinomial") else None)
    if name and fn not in ("native_dropout", "state"):
        a, b = ours.view(D.np_dtype(name)), theirs.view(D.np_dtype(name))
        j = np.flatnonzero(~(a.view(np.uint8).reshape(a.size, -1) == b.view(np.uint8).reshape(b.size, -1)).all(1))
        msg += f"; {j.size} of {a.size} elements, e.g. [{j[0]}] ours {a[j[0]]!r} upstream {b[j[0]]!r}"
    return msg


@pytest.mark.golden
@pytest.mark.parametrize("ci", range(len(CASES)))
def test_matches_upstream(upstream_results, ci):
    bad = _run_case(ci, CASES[ci], upstream_results)
    assert not bad, "\n".join(bad[:20])


@pytest.mark.golden
def test_errors_match(upstream_results):
    """The deliberately invalid calls in the cases raise on both sides (message text aside)."""
    raised = [k for k in upstream_results if k.endswith("_err")]
    assert len(raised) >= 5 * 6  # per seed: uint32 random_, int8 to=300, from=to, uint16 bernoulli, p=1.5, ...


@pytest.mark.golden
def test_wrong_implementations_are_caught(upstream_results):
    """The comparison has teeth: plausible wrong generators disagree with upstream."""
    def seed_plus_one(seed):
        return R.CPUGeneratorState().manual_seed(seed + 1)

    def no_initial_twist(seed):  # forgetting that seeding leaves left = 1 (twist before first draw)
        g = R.CPUGeneratorState().manual_seed(seed)
        g.engine.left = 625
        return g

    for make in (seed_plus_one, no_initial_twist):
        assert all(_run_case(ci, case, upstream_results, make) for ci, case in enumerate(CASES[:3]))

    # x * (b - a) + a rounded the other way than the capability in force rounds it (unfused where
    # upstream's build fuses, fused in DEFAULT): a large share of float32 draws come out different
    from torchnative.csrc.platform import cpu_capability
    from torchnative.csrc.random.fpmath import fma32

    ci = len(CASES) - 1
    g = R.CPUGeneratorState().manual_seed(CASES[ci]["seed"])
    R.normal_(g, 200000, "float32")
    u = R.uniform_float(g, 200000)
    lo, hi = np.float32(-3.3), np.float32(7.1)
    wrong = u * (hi - lo) + lo if cpu_capability.CONTRACTS_FMA else fma32(u, hi - lo, lo)
    theirs = upstream_results[f"c{ci}_o1"].view(np.float32)
    frac = np.mean(wrong != theirs)
    print(f"uniform_(a, b) rounded the other way: {frac:.1%} of float32 draws differ from upstream")
    assert frac > 0.01, frac


@pytest.mark.golden
def test_state_round_trips_both_ways(upstream_results, tmp_path):
    """Upstream's state (with a cached normal sample) continues identically here, and ours
    continues identically on upstream."""
    code = r'''
import json, sys, numpy as np, torch
g = torch.Generator().manual_seed(99)
torch.randn(3, generator=g, dtype=torch.float64)  # odd count: leaves a cached sample
up_state = g.get_state().numpy().copy()
after = torch.randn(5, generator=g, dtype=torch.float64).numpy()
ours = np.load(sys.argv[1])
h = torch.Generator(); h.set_state(torch.from_numpy(ours))
cont = torch.rand(1000, generator=h).numpy(), torch.randn(3, generator=h, dtype=torch.float64).numpy()
np.savez(sys.argv[2], up_state=up_state, after=after, cont0=cont[0], cont1=cont[1], seed=np.uint64(h.initial_seed()))
'''
    ours = R.CPUGeneratorState().manual_seed(7)
    R.randperm(ours, 10)
    R.normal_(ours, 1, "float64")  # leaves a cached sample in our state
    mine = ours.get_state()
    np.save(tmp_path / "ours.npy", mine)
    (tmp_path / "rt.py").write_text(code)
    upstream.run_script(tmp_path / "rt.py", str(tmp_path / "ours.npy"), str(tmp_path / "rt.npz"))
    got = np.load(tmp_path / "rt.npz")
    g = R.CPUGeneratorState().set_state(got["up_state"])
    assert np.array_equal(g.get_state(), got["up_state"])  # byte-identical re-serialisation
    assert np.array_equal(_bits(R.normal_(g, 5, "float64")), _bits(got["after"]))
    assert np.array_equal(_bits(R.uniform_(ours, 1000, "float32")), _bits(got["cont0"]))
    assert np.array_equal(_bits(R.normal_(ours, 3, "float64")), _bits(got["cont1"]))
    assert int(got["seed"]) == 7


@pytest.mark.golden
def test_random_kernels_per_capability(tmp_path):
    """Under each capability this CPU runs (its own, ATEN_CPU_CAPABILITY=default, and avx2 on an
    AVX512 CPU), ours draws upstream's bits: normal_ on >= 16 float32 values (the AVX2 Box-Muller,
    or DEFAULT's scalar one with glibc's logf/cosf/sinf) and uniform_(a, b) (fused multiply-add or
    not); and the kernels really differ between capabilities, so each claim is its own."""
    from torchnative.csrc.platform import cpu_capability as cc

    code = r'''
import numpy as np, sys, torch
g = torch.Generator().manual_seed(0)
n = torch.randn(4096, generator=g).numpy()
g.manual_seed(0)
u = torch.empty(4096).uniform_(-3.3, 7.1, generator=g).numpy()
g.manual_seed(0)
d = torch.randn(100, dtype=torch.float64, generator=g).numpy()
g.manual_seed(0)  # the scalar double path's std * x + mean: few draws, then more than 64
s = np.concatenate([torch.empty(9, dtype=torch.float64).normal_(0.25, 3.5, generator=g).numpy(),
                    torch.empty(13, 5).t().normal_(-1.5, 0.3, generator=g).t().reshape(-1).numpy()])
np.savez(sys.argv[1], n=n, u=u, d=d, s=s, cap=np.array(torch.backends.cpu.get_cpu_capability()))
'''
    if not upstream.available():
        pytest.fail("upstream torch environment (.venv-upstream) is not set up")
    (tmp_path / "k.py").write_text(code)
    native = cc.detect(cc.FLAGS)
    caps = ["", "default"] + (["avx2"] if native == cc.AVX512 else [])
    runs = {}
    for cap in caps:
        extra = {"ATEN_CPU_CAPABILITY": cap} if cap else {}
        for side, python, env in (("up", str(upstream.UPSTREAM_PYTHON), upstream.upstream_env()),
                                  ("ours", upstream.ours_python(), dict(os.environ))):
            env = {k: v for k, v in env.items() if k != "ATEN_CPU_CAPABILITY"}
            out = tmp_path / f"{side}_{cap}.npz"
            subprocess.run([python, str(tmp_path / "k.py"), str(out)], env={**env, **extra},
                           check=True, capture_output=True)
            runs[side, cap] = np.load(out)
    for cap in caps:
        up, ours = runs["up", cap], runs["ours", cap]
        assert str(ours["cap"]) == str(up["cap"]), cap
        for k in ("n", "u", "d", "s"):
            assert np.array_equal(_bits(ours[k]), _bits(up[k])), (cap or native, k)
    if native in (cc.AVX2, cc.AVX512):
        assert not np.array_equal(runs["up", ""]["n"], runs["up", "default"]["n"])
        assert not np.array_equal(runs["up", ""]["u"], runs["up", "default"]["u"])


# ---------------------------------------------------------------- no upstream needed


def test_engine_is_mt19937():
    """Same words as numpy's reference MT19937 under the classic init_genrand seeding."""
    for seed in [0, 5489, 2**32 - 1]:
        ref = np.random.MT19937()
        ref._legacy_seeding(seed)
        g = R.CPUGeneratorState().manual_seed(seed)
        assert np.array_equal(g.random(3000), ref.random_raw(3000).astype(np.uint32))


def test_state_layout_and_checks():
    g = R.CPUGeneratorState()
    assert g.initial_seed() == 67280421310721
    s = g.get_state()
    assert s.dtype == np.uint8 and s.size == 5056
    assert int(s[:8].view(np.uint64)[0]) == 67280421310721 and s[8:16].view(np.int32).tolist() == [1, 1]
    g.manual_seed(-1)
    assert g.initial_seed() == 2**64 - 1
    with pytest.raises(RuntimeError, match="size 5056"):
        g.set_state(s[:-1])
    bad = s.copy()
    bad[8:12] = 0  # left = 0
    with pytest.raises(RuntimeError, match="Invalid mt19937 state"):
        g.set_state(bad)
    for call in (g.get_offset, lambda: g.set_offset(1)):
        with pytest.raises(RuntimeError, match="does not use offset"):
            call()
    a, b = g.seed(), g.seed()
    assert a != b and g.initial_seed() == b
    c = g.clone()
    assert np.array_equal(c.random(10), g.random(10))


def test_fma_emulation_is_exact():
    rng = np.random.default_rng(5)
    a = rng.standard_normal(3000) * np.exp(rng.uniform(-30, 30, 3000))
    b = rng.standard_normal(3000) * np.exp(rng.uniform(-30, 30, 3000))
    c = -(a * b) * (1 + rng.standard_normal(3000) * 1e-12)  # heavy cancellation
    got = fma64(a, b, c)
    assert all(float(Fraction(x) * Fraction(y) + Fraction(z)) == r for x, y, z, r in zip(a, b, c, got))
    for zero in (0.0, -0.0):  # the zero addend's shortcut: one rounding, and fma's signed zeros
        got = fma64(np.append(a, [0.0, -0.0, 2.0]), np.append(b, [-1.0, -1.0, -0.0]), zero)
        want = [float(Fraction(x) * Fraction(y)) for x, y in zip(a, b)]
        assert np.array_equal(got[:-3], want)
        signs = np.signbit(got[-3:]).tolist()
        assert signs == ([False, False, False] if zero == 0.0 and not np.signbit(zero) else [True, False, True])
    a32, b32 = a.astype(np.float32) / 1e10, rng.uniform(1, 2, 3000).astype(np.float32)
    c32 = (-(a32.astype(np.float64) * b32) * (1 + rng.standard_normal(3000) * 1e-6)).astype(np.float32)
    got = fma32(a32, b32, c32)
    for x, y, z, r in zip(a32, b32, c32, got):
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        near = np.float32(float(exact))
        cands = [np.nextafter(near, np.float32(-np.inf)), near, np.nextafter(near, np.float32(np.inf))]
        best = min(cands, key=lambda v: (abs(Fraction(float(v)) - exact), int(np.array(v).view(np.uint32)) & 1))
        assert best == r


def test_vectorized_fisher_yates_equals_the_loop():
    from torchnative.csrc.random.sampling import _front_fisher_yates

    rng = np.random.default_rng(11)
    for n in [2, 3, 4, 5, 17, 100, 4097]:
        for _ in range(20):
            j = np.arange(n - 1) + rng.integers(0, 2**32, n - 1) % np.arange(n, 1, -1)
            a = list(range(n))
            for t, jt in enumerate(j.tolist()):
                a[t], a[jt] = a[jt], a[t]
            assert np.array_equal(_front_fisher_yates(j), a)


def test_topk_replay_matches_a_plain_reading_of_libstdcxx():
    """The fast path (distinct top values) and the libstdc++ replay agree where both apply."""
    from torchnative.csrc.random import stdalgo

    rng = np.random.default_rng(3)
    for n, k in [(10, 3), (100, 1), (100, 50), (1000, 15), (1000, 999)]:
        keys = rng.permutation(n).astype(float)
        assert stdalgo.topk_largest(keys.tolist(), k) == np.argsort(-keys)[:k].tolist()


def _grid_mismatches(G, A, lo: int, step: int) -> int:
    """Lanes of k in [lo, lo + step) where normal_fill32 and the reference differ."""
    u = np.arange(lo, lo + step, dtype=np.uint32).astype(np.float32) * np.float32(2.0 ** -24)
    u1 = np.float32(1) - u
    bad = np.count_nonzero(G.log_grid(u1).view(np.uint32) != A.log256_ps(u1).view(np.uint32))
    theta = A.TWO_PI * u
    for fast, ref in zip(G.sincos_grid(theta), A.sincos256_ps(theta)):
        bad += np.count_nonzero(fast.view(np.uint32) != ref.view(np.uint32))
    return bad


def test_grid_box_muller_is_the_reference_on_every_input():
    """normal_fill's fast float32 path rounds each fused step from float64 instead of emulating
    one rounding and leaves out what the grid rules out; that is only right because normal_fill's
    inputs are uniforms on the 2**-24 grid, and for every one of those 2**24 values (u1 = 1 - u
    into log, u2 = u into sincos) it gives the reference's bits."""
    from torchnative.csrc.random import avx_mathfun as A, normal_fill32 as G

    step = 1 << 20
    for lo in range(0, 1 << 24, step):
        assert _grid_mismatches(G, A, lo, step) == 0, lo


def test_grid_box_muller_control(monkeypatch):
    """The exhaustive check has teeth: the same steps with the fused multiply-add rounded twice
    (float32 product, then float32 sum, as an unfused build computes it) differ from the
    reference."""
    from torchnative.csrc.random import avx_mathfun as A, normal_fill32 as G

    def unfused(t, c, out):
        return np.add(t.astype(np.float32), np.asarray(c, np.float32), out=out)

    monkeypatch.setattr(G, "_fused", unfused)
    assert _grid_mismatches(G, A, 0, 1 << 20) > 0


def test_grid_box_muller_control_kept_steps(monkeypatch):
    """log's Horner steps kept in float64 are load-bearing on their own: rounding their product
    and sum to float32 separately (an unfused build) differs from the reference."""
    from torchnative.csrc.random import avx_mathfun as A, normal_fill32 as G

    def unfused(t, c, scratch):
        np.copyto(t, (t.astype(np.float32) + np.float32(c)).astype(np.float64))
        return t

    monkeypatch.setattr(G, "_fused_kept", unfused)
    assert _grid_mismatches(G, A, 4 << 20, 1 << 20) > 0  # u1 near 3/4: |x| is not small


def test_grid_fill_is_the_reference_fill():
    """The whole fill (words to rows of 16, both halves, the caller's mean and std through each
    of its three roundings) against the reference on random words, over several chunks."""
    from torchnative.csrc.random import avx_mathfun as A, normal_fill32 as G

    words = np.random.default_rng(2).integers(0, 2**32, 16 * (G._ROWS + 37), dtype=np.uint64)
    words = words.astype(np.uint32)
    blocks = ((words & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)).reshape(-1, 16)
    for mean, std in [(0.0, 1.0), (0.0, 0.02), (-0.0, 3.0), (1.5, 1.0), (0.3, 0.7), (0.0, 0.0), (-2.0, 1e-30)]:
        out = np.empty(words.size, np.float32)
        G.fill_from_words(words, out, mean, std)
        ref = A.normal_fill16_f32_reference(blocks, mean, std)
        assert np.array_equal(out.view(np.uint32), ref.ravel().view(np.uint32)), (mean, std)


def test_engine_state_mapping_round_trips():
    """Every engine state (including ones no draw leaves behind: left + next != 625) continues
    with the reference twist's words, and reads back the same fields."""
    from torchnative.csrc.random.mt19937 import MT19937, temper, twist

    rng = np.random.default_rng(4)
    for trial in range(60):
        words = rng.integers(0, 2**32, 624, dtype=np.uint64).astype(np.uint32)
        left = int(rng.integers(1, 625))
        nxt = int(rng.integers(0, 625 - left + 1)) if trial % 2 else 625 - left
        e = MT19937.from_fields(words, left, nxt, 7, True)
        state, want = words.copy(), []
        l, nx = left, nxt
        n = int(rng.choice([1, 5, 700, 2000]))
        while len(want) < n:  # upstream's operator() word by word
            l -= 1
            if l == 0:
                state, l, nx = twist(state), 624, 0
            want.append(state[nx])
            nx += 1
        assert np.array_equal(e.random(n), temper(np.array(want, np.uint32))), trial
        assert (e.left, e.next) == (l, nx) and np.array_equal(e.state, state), trial


def test_seeding_paths_agree(monkeypatch):
    """numpy's C seeding (when present and checked) and the Python init_genrand loop seed the
    same state, and a reseeded engine forgets everything it drew."""
    from torchnative.csrc.random import mt19937

    for seed in [0, 1, 5489, 2**32 - 1, 2**32 + 7, 2**64 - 1]:
        fast = R.CPUGeneratorState().manual_seed(seed)
        monkeypatch.setattr(mt19937, "_LEGACY_SEEDING", False)
        slow = R.CPUGeneratorState().manual_seed(seed)
        monkeypatch.undo()
        assert np.array_equal(fast.get_state(), slow.get_state()), seed
        assert np.array_equal(fast.random(1500), slow.random(1500)), seed
        fast.random(77)
        fast.manual_seed(seed)
        slow.manual_seed(seed)
        assert np.array_equal(fast.get_state(), slow.get_state()), seed


def test_engine_draw_sources_are_one_stream():
    """Draws of every size, words and pairs interleaved, read numpy's engine through its raw
    words (few) or its full-range integers (many), and give the reference twist's words in
    order, with upstream's ``left``/``next`` after each."""
    from torchnative.csrc.random.mt19937 import MT19937, N, RAW_PAIRS, RAW_WORDS, temper, twist

    e = MT19937(2024)
    state = twist(np.array(e.state, np.uint32))  # seeded: it twists before the first draw
    words = [state]
    for _ in range(40):
        words.append(twist(words[-1]))
    stream = temper(np.concatenate(words))
    at = 0
    sizes = [("w", 1), ("p", 1), ("w", RAW_WORDS), ("w", RAW_WORDS + 1), ("p", RAW_PAIRS),
             ("p", RAW_PAIRS + 1), ("w", 623), ("p", 5), ("w", 2), ("p", 2 * RAW_PAIRS)]
    for kind, n in sizes:
        if kind == "w":
            got = e.random(n)
            want = stream[at:at + n]
            at += n
        else:
            got = e.random64(n)
            w = stream[at:at + 2 * n].astype(np.uint64)
            want = (w[0::2] << np.uint64(32)) | w[1::2]
            at += 2 * n
        assert got.dtype == want.dtype and np.array_equal(got, want), (kind, n)
        nxt = (at - 1) % N + 1
        assert (e.left, e.next) == (N + 1 - nxt, nxt), (kind, n)


def test_numpy_stream_check_catches_another_stream(monkeypatch):
    """The once-per-process check of numpy's word sources refuses an engine whose words are not
    the reference's (here: one word ahead)."""
    from torchnative.csrc.random import mt19937

    real = mt19937._numpy_engine

    def ahead(key, pos, bg=None):
        return real(key, pos - 1, bg)

    monkeypatch.setattr(mt19937, "_numpy_engine", ahead)
    with pytest.raises(RuntimeError, match="not the raw mt19937 stream"):
        mt19937._check_numpy_stream()
    monkeypatch.undo()
    mt19937._check_numpy_stream()


@pytest.mark.parametrize("fused", [True, False])
def test_uniform_skips_the_look_for_to_only_where_no_draw_reaches_it(monkeypatch, fused):
    """uniform_ replaces a draw that rounds to ``to`` by ``from``, and skips that pass where the
    largest uniform's value stays below ``to``. Over every one of the 2**24 float uniforms, a
    range whose draws reach ``to`` must say so, in both builds' arithmetic; ranges of both kinds
    are among the cases, so a rule that always skips (or never does) fails here."""
    from torchnative.csrc.platform import cpu_capability
    from torchnative.csrc.random import distributions as dist

    monkeypatch.setattr(cpu_capability, "CONTRACTS_FMA", fused)
    dist._top_reaches.cache_clear()
    grid = np.arange(1 << 24, dtype=np.uint32)

    class Grid:  # every float uniform once, in order
        pos = 0

        def random(self, n):
            self.pos += n
            return grid[self.pos - n:self.pos].copy()

    seen = set()
    for a, b in [(0.0, 1.0), (-2.5, 7.25), (1.0, 1.0000001), (3.0, 3.0000005), (0.0, 3e38),
                 (1e-30, 1.0), (-1.0, -0.9999999), (1e10, 1e10 + 1e3), (0.5, 0.5)]:
        raw = dist._uniform_scaled_f32(Grid(), 1 << 24, np.float32(b) - np.float32(a),
                                       np.float32(a))
        for name in ("float32", "float16", "bfloat16"):
            lo, hi = D.float_range(name)
            if not (lo <= a <= hi and lo <= b <= hi and b - a <= hi):
                continue
            hits = bool((D.from_float32(raw, name) == D.scalar_to(b, name)).any())
            reaches = dist._top_reaches(name, a, b)
            assert hits <= reaches, (name, a, b)
            seen.add(reaches)
    assert seen == {True, False}
    top = np.array([1.0 - 2.0 ** -53])  # float64: the largest uniform bounds the rest
    for a, b in [(0.0, 1.0), (1.0, 1.0 + 2.0 ** -52), (-3.0, 5.0)]:
        reaches = dist._top_reaches("float64", a, b)
        assert reaches == bool(R.distributions.contracted64(top, b - a, a)[0] >= b), (a, b)
    dist._top_reaches.cache_clear()


def test_bernoulli_compares_the_words_as_the_doubles_compare(monkeypatch):
    """bernoulli_(p) with a number p compares the 53-bit word k, not the double u = k * 2**-53,
    with p: the same outcome for the words next to every threshold, p at its edges included;
    a threshold one off is caught."""
    import math

    from torchnative.csrc.random import distributions as dist

    def outcomes(p, words):
        class Words:
            def random64(self, n):
                return words.copy()

        return dist.bernoulli_(Words(), (words.size,), "float64", p)

    for p in [0.0, 1.0, 0.5, 0.3, 0.75, 2.0 ** -53, 1.0 - 2.0 ** -53, 1e-300,
              math.nextafter(0.5, 1.0), math.nextafter(0.5, 0.0), 0.1 + 2.0 ** -60]:
        t = math.floor(p * 2.0 ** 53)
        k = np.array([max(t + d, 0) for d in (-2, -1, 0, 1, 2)], np.uint64)
        k = k[k < 2 ** 53]
        want = ((k.astype(np.float64) * 2.0 ** -53) < p).astype(np.float64)
        high = k | np.uint64(0xABC) << np.uint64(53)  # the 11 bits above the 53 are dropped
        assert np.array_equal(outcomes(p, high), want), p
    real = math.ceil
    monkeypatch.setattr(dist.math, "ceil", lambda x: real(x) + 1)
    k = np.array([2 ** 52], np.uint64)  # u = 0.5 exactly: not below p = 0.5
    assert not np.array_equal(outcomes(0.5, k), np.zeros(1))


def test_uniform_exact_sum_shortcut_is_the_fused_result(monkeypatch):
    """uniform_ rounds its float64 ``u * width + from`` without the double-rounding check when
    that sum is exact for every grid u; both paths against the round-to-odd fma emulation,
    and ranges the shortcut must refuse. (Both paths belong to builds that contract ``a * b +
    c``: under ATEN_CPU_CAPABILITY=default they are taken all the same.)"""
    from torchnative.csrc.platform import cpu_capability
    from torchnative.csrc.random import distributions as dist

    monkeypatch.setattr(cpu_capability, "CONTRACTS_FMA", True)

    words = np.random.default_rng(8).integers(0, 2**32, 50000, dtype=np.uint64).astype(np.uint32)
    words[:3] = [0, 0xFFFFFF, 0x800000]  # u = 0, the largest u, u = 0.5

    class Words:  # the generator's word stream, replayed
        pos = 0

        def random(self, n):
            self.pos += n
            return words[self.pos - n:self.pos].copy()

    u = (words & np.uint32(0xFFFFFF)).astype(np.float32) * np.float32(2.0 ** -24)
    cases = [(0.0, 1.0, True), (-0.0417, 0.0417, True), (-3.0, 5.0, True), (2.0, 2.5, True),
             (1e-3, 1e-3 + 1e-6, True), (3e-30, 1.0, False), (-1e-35, 1.0, False),
             (1e10, 1e10 + 1e3, True)]
    for a, b, exact in cases:
        width, frm = np.float32(b) - np.float32(a), np.float32(a)
        assert dist._sum_is_exact(width, frm) == exact, (a, b)
        got = dist._uniform_scaled_f32(Words(), u.size, width, frm)
        assert np.array_equal(got.view(np.uint32), fma32(u, width, frm).view(np.uint32)), (a, b)


def test_grid_box_muller_control_in_binade_steps(monkeypatch):
    """The steps rounded in float64 to a fixed float32 ulp are load-bearing too: rounding their
    product and sum to float32 separately (an unfused build) differs from the reference."""
    from torchnative.csrc.random import avx_mathfun as A, normal_fill32 as G

    def unfused(t, c, rounder):
        np.copyto(t, (t.astype(np.float32) + np.float32(c)).astype(np.float64))
        return t

    monkeypatch.setattr(G, "_fused_in_binade", unfused)
    assert _grid_mismatches(G, A, 0, 1 << 20) > 0
