"""Each torchnative-cpu kernel against the unfused layer transformers ships, computed by
upstream torch in its own process: forward and backward, in the dtypes and shapes SmolLM2
feeds them (prefill and decode; float32, bfloat16, float16, float64). The tolerance of every
output is derived from upstream's own error on it (its result in the case's dtype against its
float64 rerun); deliberately wrong kernels must be rejected by the same comparison."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp, tolerance

WORKER = Path(__file__).resolve().parent / "hub_kernels_golden_worker.py"
HIDDEN, INTER, HEADS, KV_HEADS, HEAD_DIM = 576, 1536, 9, 3, 64   # SmolLM2-135M
ROUND = {"float32": np.float32, "float16": np.float16, "bfloat16": ml_dtypes.bfloat16,
         "float64": np.float64}


def _rope(rng, b, length, start):
    inv = 100000.0 ** (-np.arange(0, HEAD_DIM, 2) / HEAD_DIM)
    pos = start + np.arange(length)[None, :] + rng.integers(0, 4, (b, 1))
    ang = np.concatenate([pos[..., None] * inv] * 2, -1)
    return np.cos(ang), np.sin(ang)


def _cases(rng):
    """(case, shape tag, inputs, extra) in the shapes a SmolLM2 forward produces."""
    # "step": one sequence's decode step, the single row the kernels treat on their own
    for tag, b, lq, lk in (("prefill", 2, 7, 7), ("decode", 2, 1, 17), ("step", 1, 1, 9)):
        # hidden states carry a few large outlier channels, as real ones do
        x = rng.standard_normal((b, lq, HIDDEN)) * np.where(rng.random(HIDDEN) < 0.01, 40.0, 1.0)
        yield ("rms_norm", tag, {"x": x, "weight": 1 + 0.3 * rng.standard_normal(HIDDEN)},
               {"eps": 1e-5})
        cos, sin = _rope(rng, b, lq, lk - lq)
        yield ("rotary", tag, {"q": 2 * rng.standard_normal((b, HEADS, lq, HEAD_DIM)),
                               "k": 2 * rng.standard_normal((b, KV_HEADS, lq, HEAD_DIM)),
                               "cos": cos, "sin": sin}, {})
        yield ("silu", tag, {"x": 3 * rng.standard_normal((b, lq, INTER))}, {})
        yield ("silu_and_mul", tag, {"x": 3 * rng.standard_normal((b, lq, 2 * INTER))}, {})
        extra = {"scaling": HEAD_DIM ** -0.5}
        if tag == "decode":   # the second sequence is left-padded by three positions
            extra["key_mask"] = [[1] * lk, [0] * 3 + [1] * (lk - 3)]
        yield ("attention", tag, _qkv(rng, b, lq, lk), extra)
    # a left-padded prefill under transformers' 4-D sdpa mask (padded queries see no key)
    yield ("attention", "padded", _qkv(rng, 2, 7, 7),
           {"scaling": HEAD_DIM ** -0.5, "key_mask": [[1] * 7, [0] * 3 + [1] * 4], "mask4d": True})
    # a decode step over a long cache (no gradient: torch's sdpa rather than the operator)
    yield ("attention", "long", _qkv(rng, 1, 1, 200), {"scaling": HEAD_DIM ** -0.5})
    # a 24-token prefill, the second sequence left-padded (no gradient: torch's sdpa, causality
    # added to the padding mask)
    yield ("attention", "wide", _qkv(rng, 2, 24, 24),
           {"scaling": HEAD_DIM ** -0.5, "key_mask": [[1] * 24, [0] * 5 + [1] * 19]})


def _qkv(rng, b, lq, lk):
    return {"q": 2 * rng.standard_normal((b, HEADS, lq, HEAD_DIM)),
            "k": 2 * rng.standard_normal((b, KV_HEADS, lk, HEAD_DIM)),
            "v": rng.standard_normal((b, KV_HEADS, lk, HEAD_DIM))}


N_OUTS = {"rotary": 2}
DTYPES = ("float32", "bfloat16", "float16", "float64")


def _inputs(path: Path) -> list[dict]:
    rng = np.random.default_rng(13)
    arrays, spec = {}, []
    for case, tag, inputs, extra in _cases(rng):
        for dtype in DTYPES:
            key = f"{case}-{tag}-{dtype}"
            for name, a in inputs.items():
                # exactly representable in the case's dtype, so no side rounds its inputs
                arrays[f"{key}/{name}"] = a.astype(ROUND[dtype]).astype(np.float64)
            spec.append({"key": key, "case": case, "dtype": dtype, "inputs": list(inputs),
                         "extra": extra})
    # one upstream-shaped gradient per output (shapes taken from a float32 run of the formula)
    for item in spec:
        shapes = _out_shapes(item["case"], {n: arrays[f"{item['key']}/{n}"].shape
                                            for n in item["inputs"]})
        for i, s in enumerate(shapes):
            arrays[f"{item['key']}/grad{i}"] = (rng.standard_normal(s)
                                                .astype(ROUND[item["dtype"]]).astype(np.float64))
    np.savez(path, spec=np.array(json.dumps(spec)), **arrays)
    return spec


def _out_shapes(case, shapes):
    if case == "rotary":
        return [shapes["q"], shapes["k"]]
    if case == "silu_and_mul":
        return [shapes["x"][:-1] + (shapes["x"][-1] // 2,)]
    if case == "attention":
        b, h, lq, d = shapes["q"]
        return [(b, lq, h, d)]
    return [shapes["x"]]


def _run(python, side, inputs, outs, env=None):
    proc = subprocess.run([str(python), str(WORKER), side, str(inputs), *map(str, outs)],
                          capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        raise RuntimeError(f"{side} worker failed:\n{proc.stderr[-4000:]}")
    res = []
    for out in outs:
        with np.load(out) as z:
            res.append({k: z[k] for k in z.files})
    return res


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    d = tmp_path_factory.mktemp("golden")
    spec = _inputs(d / "inputs.npz")
    ref, = _run(upstream.UPSTREAM_PYTHON, "reference", d / "inputs.npz", [d / "ref.npz"],
                upstream.upstream_env())
    ours, wrong = _run(upstream.ours_python(), "kernel", d / "inputs.npz",
                       [d / "ours.npz", d / "wrong.npz"])
    return spec, ref, ours, wrong


def _outputs(ref, key):
    return sorted(k.split("/")[2] for k in ref if k.startswith(f"{key}/low/"))


def _tol(ref, key, name, dtype) -> tuple[tolerance.Tol, float]:
    """(tolerance, absolute slack) from upstream's own error on this output. Where float64 has
    nothing wider to rerun in, upstream's error on it is estimated twice: the float32 case
    (same values, rounded) measured against float64, its worst absolute error scaled by the
    ratio of the epsilons; and, for attention, how far upstream's two sdpa backends disagree.
    Two results each within the larger estimate of the exact value (ours and upstream's)
    differ by at most twice it; the float32 tolerance carries over in ulps."""
    if f"{key}/high/{name}" in ref:
        return tolerance.derive([(ref[f"{key}/low/{name}"], ref[f"{key}/high/{name}"])], dtype), 0.0
    f32 = key.rsplit("-", 1)[0] + "-float32"
    low, high = ref[f"{f32}/low/{name}"], ref[f"{f32}/high/{name}"]
    err = float(np.abs(low - high).max()) * np.finfo(np.float64).eps / np.finfo(np.float32).eps
    if f"{key}/again/{name}" in ref:
        err = max(err, float(np.abs(ref[f"{key}/again/{name}"] - ref[f"{key}/low/{name}"]).max()))
    slack = 2 * err
    return tolerance.scaled(_tol(ref, f32, name, "float32")[0], "float32", dtype), slack


def verdicts(ref, got, key, dtype) -> dict[str, str | None]:
    """None per output that agrees with upstream, else why not."""
    res = {}
    for name in _outputs(ref, key):
        u, o = ref[f"{key}/low/{name}"], got[f"{key}/low/{name}"]
        if name.startswith("out") and str(got[f"{key}/dtype/{name}"]) != str(ref[f"{key}/dtype/{name}"]):
            res[name] = f"dtype {got[f'{key}/dtype/{name}']} vs upstream {ref[f'{key}/dtype/{name}']}"
            continue
        tol, slack = _tol(ref, key, name, dtype)
        res[name] = (cmp.nonfinite(u, o) or
                     cmp.close(u, o, ref.get(f"{key}/high/{name}"), slack, tol))
    return res


KEYS = ([f"{c}-{t}-{d}" for c in ("rms_norm", "rotary", "silu", "silu_and_mul", "attention")
         for t in ("prefill", "decode", "step") for d in DTYPES]
        + [f"attention-{t}-{d}" for t in ("long", "padded", "wide") for d in DTYPES])


@pytest.mark.parametrize("key", KEYS)
def test_kernel_agrees_with_upstream_unfused_layer(runs, key):
    _, ref, ours, _ = runs
    dtype = key.rsplit("-", 1)[1]
    res = verdicts(ref, ours, key, dtype)
    # forward outputs and a gradient for every floating input (attention: and its no-grad call)
    assert sum(n.startswith("out") for n in res) == N_OUTS.get(key.split("-")[0], 1)
    assert ("inference0" in res) == key.startswith("attention")
    assert any(n.startswith("d_") for n in res)
    assert all(v is None for v in res.values()), res


@pytest.mark.parametrize("case", ["rms_norm", "rotary", "silu", "silu_and_mul", "attention"])
def test_wrong_kernel_is_rejected(runs, case):
    _, ref, _, wrong = runs
    # float32 and float64 (the half-precision SiLU is no error at 16 bits)
    for key in (f"{case}-{tag}-{dtype}" for tag in ("prefill", "decode", "step")
                for dtype in ("float32", "float64")):
        res = verdicts(ref, wrong, key, key.rsplit("-", 1)[1])
        assert any(res[n] is not None for n in res if n.startswith("out")), (key, res)
        assert any(res[n] is not None for n in res if n.startswith("d_")), (key, res)
        if case == "attention":    # the call without a gradient is compared too
            assert res["inference0"] is not None, (key, res)
