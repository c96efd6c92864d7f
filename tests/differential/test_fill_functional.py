"""The functional fill (``fill.Scalar``, ``fill.Tensor``) and ``zero`` as kernels (empty_like of
self, then the in-place kernel, as upstream's CompositeExplicitAutograd ones), against upstream
torch 2.13.0 in a separate process, bit for bit: values, dtypes, strides (dense, transposed,
expanded, channels-last and sliced inputs), the value's checks (a 1-element 1-d value tensor is
refused, as fill_ refuses it; the Python decomposition accepted it) and the autograd nodes."""

from __future__ import annotations

import sides

PROGRAM = r"""
A = torch.ops.aten
out = {}
x = torch.randn(3, 4)
inputs = {"plain": x, "transposed": x.t(), "expanded": x[:1].expand(3, 4), "sliced": x[:, ::2],
          "channels-last": torch.randn(1, 2, 3, 3).contiguous(memory_format=torch.channels_last)}
cases = {"fill": lambda t: A.fill.Scalar(t, 2.5),
         "fill tensor": lambda t: A.fill.Tensor(t, torch.tensor(7)),
         "zero": lambda t: A.zero(t),
         "fill float16 overflow": lambda t: A.fill.Scalar(t.half(), 1e6),
         "fill int": lambda t: A.fill.Scalar(t.int(), 2.7),
         "fill 1-d value": lambda t: A.fill.Tensor(t, torch.ones(1)),
         "fill complex into float": lambda t: A.fill.Scalar(t, 1j)}
for name, f in cases.items():
    for label, t in inputs.items():
        out[f"{name} {label}"] = outcome(lambda: f(t), bits=True)
xr = torch.randn(3, requires_grad=True)
out["nodes"] = [type(A.fill.Scalar(xr, 1.).grad_fn).__name__,
                type(A.fill.Tensor(xr, torch.tensor(2.)).grad_fn).__name__,
                type(A.zero(xr).grad_fn).__name__]
print(json.dumps(out))
"""


def test_fill_and_zero_agree_with_upstream():
    ours, up = sides.on_both(PROGRAM)
    sides.assert_same(ours, up, at_least=36)
