"""gelu_backward (approximate "none") against upstream, bit for bit, where upstream hands it to
oneDNN (a contiguous float32 input of more than one element; bfloat16 where oneDNN computes it):
oneDNN's jit derivative (Abramowitz-Stegun erf with its own exp, its table's constants, the
multiply-adds fused from AVX2 up) times the incoming gradient. Called directly and reached
through autograd. Other layouts and the tanh form keep upstream's decomposition (compared at
the derived tolerance by the OpInfo sweeps)."""

from __future__ import annotations

import exact_programs as ep
from torchnative.csrc.platform import cpu_capability as cap

PROGRAM = r"""
import json, torch
import torch.nn.functional as F
g = torch.Generator().manual_seed(0)
x = torch.randn(4, 10, 96, generator=g) * 3
x.view(-1)[:9] = torch.tensor([0.0, -0.0, float("inf"), float("-inf"), float("nan"), 10.0,
                               -10.0, 1e-30, -5.5])
dy = torch.randn(4, 10, 96, generator=g)
out = {"float32": torch.ops.aten.gelu_backward(dy, x).double().tolist(),
       "bfloat16": torch.ops.aten.gelu_backward(dy.bfloat16(), x.bfloat16()).double().tolist()}
leaf = x.clone().requires_grad_()
F.gelu(leaf).backward(dy)
out["through autograd"] = leaf.grad.double().tolist()
out["float64 rounded to float32"] = torch.ops.aten.gelu_backward(
    dy.double(), x.double()).float().double().tolist()
print(json.dumps(out))
"""

PROGRAM = ep.register(__name__, PROGRAM)


def test_gelu_backward_agrees_bit_for_bit_where_upstream_runs_onednn():
    ours, up = ep.run(PROGRAM)
    keys = ["float32", "through autograd"] + ["bfloat16"] * cap.ONEDNN_BF16
    assert ep.mismatches({k: ours[k] for k in keys}, {k: up[k] for k in keys}) == []
    # control: oneDNN's float32 derivative is not the exact one rounded (a kernel computing
    # the formula in double would be caught)
    assert ep.distinct(up, "float32", "float64 rounded to float32")
