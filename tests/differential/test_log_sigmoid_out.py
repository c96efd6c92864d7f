"""log_sigmoid's out= overload against upstream, exactly: values in the four floating dtypes,
the resize of a mismatched out (no warning), strided out and input, and the errors for an out
of another dtype and an integer input."""

from __future__ import annotations

import exact_programs as ep

PROGRAM = r"""
import json, torch, warnings
out = {}
def rec(name, fn):
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = fn()
        out[name] = [r.double().tolist(), list(r.stride()), len(w)]
    except Exception as e:
        out[name] = f"{type(e).__name__}: {e}"
g = torch.Generator().manual_seed(4)
for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    x = (torch.randn(2, 3, generator=g) * 30).to(dt)
    x[0, 0] = float("nan"); x[0, 1] = -float("inf")
    rec(f"{dt} same", lambda: torch._C._nn.log_sigmoid(x, out=torch.empty(2, 3, dtype=dt)))
    rec(f"{dt} resized", lambda: torch._C._nn.log_sigmoid(x, out=torch.empty(5, dtype=dt)))
    rec(f"{dt} strided out", lambda: torch._C._nn.log_sigmoid(x, out=torch.empty(3, 2, dtype=dt).t()))
    rec(f"{dt} strided in", lambda: torch._C._nn.log_sigmoid(x.t(), out=torch.empty(2, 3, dtype=dt)))
    rec(f"{dt} functional out", lambda: torch.nn.functional.logsigmoid(x, out=torch.empty(0, dtype=dt)) if False else torch._C._nn.log_sigmoid(x, out=torch.empty(0, dtype=dt)))
x = torch.randn(2, 3)
rec("wrong dtype", lambda: torch._C._nn.log_sigmoid(x, out=torch.empty(6, dtype=torch.double)))
rec("int input", lambda: torch._C._nn.log_sigmoid(torch.ones(3, dtype=torch.long), out=torch.empty(3, dtype=torch.long)))
print(json.dumps(out))
"""

PROGRAM = ep.register(__name__, PROGRAM)


def test_log_sigmoid_out_agrees():
    up = ep.agreeing(PROGRAM)
    # controls: a strided out keeps its strides (so a layout change would be seen); errors differ
    assert up["torch.float32 strided out"][1] != up["torch.float32 same"][1]
    assert up["wrong dtype"] != up["int input"]
