"""hash_tensor and its out= overload against upstream, exactly: every dtype upstream's dispatch
takes (and the refusals for the others), NaN of both signs, -0.0, strided inputs, keepdim,
0-dim and empty inputs, and upstream's errors in upstream's order."""

from __future__ import annotations

import exact_programs as ep

PROGRAM = r"""
import json, torch, warnings
warnings.simplefilter("ignore")
out = {}
def rec(name, fn):
    try:
        r = fn()
        out[name] = [str(r.dtype), list(r.shape), [str(v) for v in r.flatten().tolist()]]
    except Exception as e:
        out[name] = f"{type(e).__name__}: {e}"
g = torch.Generator().manual_seed(0)
x = torch.randn(3, 4, 5, generator=g)
x[0, 0, 0] = float("nan"); x[0, 0, 1] = -0.0; x[1, 1, 1] = float("inf"); x[2, 2, 2] = -x[0, 0, 0]
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
           torch.int8, torch.uint8, torch.bool, torch.int16, torch.complex64, torch.uint16):
    y = (x * 50).to(dt) if not dt.is_floating_point else x.to(dt)
    rec(f"{dt} all", lambda: torch.hash_tensor(y))
    rec(f"{dt} dim1", lambda: torch.hash_tensor(y, 1))
    rec(f"{dt} dims keep", lambda: torch.hash_tensor(y, [0, 2], keepdim=True))
    rec(f"{dt} transposed", lambda: torch.hash_tensor(y.transpose(0, 2), -1))
rec("0-dim", lambda: torch.hash_tensor(torch.tensor(3.)))
rec("0-dim dim0", lambda: torch.hash_tensor(torch.tensor(3.), 0))
rec("empty all", lambda: torch.hash_tensor(torch.empty(0, 3)))
rec("empty dim ok", lambda: torch.hash_tensor(torch.empty(0, 3), 1))
rec("empty dim zero", lambda: torch.hash_tensor(torch.empty(0, 3), 0))
rec("mode", lambda: torch.hash_tensor(x, mode=1))
rec("dup dim", lambda: torch.hash_tensor(x, [1, 1]))
o = torch.empty(7, dtype=torch.uint64)
rec("out", lambda: torch.hash_tensor(x, 1, out=o))
rec("out shape", lambda: torch.tensor(list(o.shape)))
rec("out dtype", lambda: torch.hash_tensor(x, mode=1, out=torch.empty(2)))
rec("method", lambda: x.hash_tensor(2))
print(json.dumps(out))
"""

PROGRAM = ep.register(__name__, PROGRAM)


def test_hash_tensor_agrees_exactly():
    up = ep.agreeing(PROGRAM)
    # controls: rounding to half and the reduced dim both change the hash upstream
    assert ep.distinct(up, "torch.float32 all", "torch.float16 all")
    assert ep.distinct(up, "torch.float32 dim1", "torch.float32 transposed")
    assert up["mode"].startswith("RuntimeError")
