"""SELU and ReLU6 as upstream's composites write them: ELU with SELU's two constants and
hardtanh(0, 6) (both were served by Python decompositions, which gave other values for some
inputs, accepted dtypes upstream refuses, and named other gradient nodes). Compared with
upstream: relu6 and relu6_ over eight dtypes with NaN, -0.0 and infinities, exactly; selu's
dtypes, errors and float64 values exactly, its float32/float16/bfloat16 values within one unit in
the last place (upstream's ELU takes its expm1 from SLEEF, correct to 1 ulp); the gradients of
both through autograd, and their nodes' names."""
from __future__ import annotations

import json

import numpy as np
import pytest

import sides
from torchnative.testing import upstream

PROGRAM = r'''
torch.manual_seed(0)
out = {}
x = torch.randn(50) * 4
x[0], x[1], x[2], x[3] = float("nan"), -0.0, float("inf"), -float("inf")
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.uint8,
           torch.bool, torch.complex64):
    for name, f in (("relu6", F.relu6), ("selu", F.selu),
                    ("relu6_", lambda t: F.relu6(t.clone(), inplace=True)),
                    ("selu_", lambda t: F.selu(t.clone(), inplace=True))):
        try:
            r = f(x.to(dt))
            out[f"{name} {dt}"] = [str(r.dtype), r.to(torch.float64).view(-1).tolist()]
        except Exception as e:
            out[f"{name} {dt}"] = type(e).__name__ + ": " + str(e)
g = torch.randn(5, requires_grad=True)
(F.selu(g).sum() + F.relu6(g * 3).sum()).backward()
out["grad"] = g.grad.tolist()
out["nodes"] = [type(F.selu(torch.randn(2, requires_grad=True)).grad_fn).__name__,
                type(F.relu6(torch.randn(2, requires_grad=True)).grad_fn).__name__]
print(json.dumps(out))
'''
_ULP = {"torch.float32": np.float32, "torch.float16": np.float16}


def _within_one_ulp(a, b, dtype: str) -> bool:
    if dtype == "torch.bfloat16":  # bfloat16 values are float32 values with 16 bits dropped
        a, b = (np.asarray(v, np.float32).view(np.uint32) >> 16 for v in (a, b))
    else:
        t = _ULP[dtype]
        bits = np.uint32 if t is np.float32 else np.uint16
        a, b = (np.asarray(v, t).view(bits) for v in (a, b))
    return bool(np.all(np.abs(a.astype(np.int64) - b.astype(np.int64)) <= 1))


def test_selu_and_relu6_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = sides.on_both(PROGRAM)
    assert theirs["nodes"] == ["EluBackward0", "HardtanhBackward0"]
    loose = {f"{n} {d}" for n in ("selu", "selu_") for d in _ULP.keys() | {"torch.bfloat16"}}
    exact = {k: (ours[k], v) for k, v in theirs.items()  # (as text: NaN equals NaN there)
             if k not in loose and json.dumps(ours[k]) != json.dumps(v)}
    assert not exact, json.dumps(exact, indent=1)
    for k in loose:
        (dt, a), (dt2, b) = ours[k], theirs[k]
        assert dt == dt2 and len(a) == len(b)
        assert [v != v for v in a] == [v != v for v in b], k  # NaN where upstream has NaN
        assert _within_one_ulp([0 if v != v else v for v in a], [0 if v != v else v for v in b],
                               dt), k
