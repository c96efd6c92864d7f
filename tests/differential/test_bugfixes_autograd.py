"""Autograd-layer bugs found in use, each compared with upstream in a separate process."""
from __future__ import annotations

import json

import sides
from bugfix_probe import assert_agree, disagreements, program

# (operator, arguments as C++ passes them): an int where the schema has int[] is a one-int list
CPP_CALLS = {
    "sum_int_dim": ("sum", "t, 0, True"),
    "sum_list_dim": ("sum", "t, [1], False"),
    "sum_all": ("sum", "t"),
    "amax_int_dim": ("amax", "t, 1, True"),
    "mean_int_dim": ("mean", "t, -1, False"),
    "logsumexp_int_dim": ("logsumexp", "t, 0, True"),
}
SETUP = "t = torch.arange(6.).reshape(2, 3)\n"


def _program(call_of) -> str:
    return program({k: call_of(op, a) for k, (op, a) in CPP_CALLS.items()}, SETUP)


def test_cpp_op_takes_an_int_for_an_int_list():
    ours = sides.on_ours("from torchnative.csrc.autograd.generated import CppOp\n" + _program(
        lambda op, a: f"CppOp('aten::{op}')({a})"))
    # upstream's Python binding of the operator accepts what its C++ signature accepts
    theirs = sides.on_upstream(_program(lambda op, a: f"torch.ops.aten.{op}({a})"))
    bad = disagreements(CPP_CALLS, ours, theirs)
    assert not bad, json.dumps(bad, indent=1)


FUNCTIONS = '''
import torch.autograd.forward_ad as fwAD
seen = []

class Mul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, y):
        ctx.save_for_forward(x, y)
        ctx.save_for_backward(y)
        return x * y

    @staticmethod
    def jvp(ctx, gx, gy):
        seen.append(("jvp", len(ctx.saved_tensors)))
        x, y = ctx.saved_tensors
        return gx * y + (0 if gy is None else gy * x)

    @staticmethod
    def backward(ctx, g):
        seen.append(("backward", len(ctx.saved_tensors)))
        (y,) = ctx.saved_tensors
        return g * y, None

class MulSetup(Mul):
    @staticmethod
    def forward(x, y):
        return x * y

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_forward(*inputs)
        ctx.save_for_backward(inputs[1])

def tangent(fn, x, y):
    seen.clear()
    with fwAD.dual_level():
        out = fn.apply(fwAD.make_dual(x, torch.ones(3)), y)
        return [fwAD.unpack_dual(out).tangent, seen[:]]

def backward(fn, x, y):
    seen.clear()
    out = fn.apply(x, y)
    after = len(out.grad_fn.saved_tensors)
    out.sum().backward()
    return [x.grad, seen[:], after]

def plain(fn, x, y):
    seen.clear()
    out = fn.apply(x, y)
    return [out, seen[:]]

X = lambda: torch.tensor([1., 2., 3.])
Y = lambda: torch.tensor([4., 5., 6.])
'''

SAVE_FOR_FORWARD = {
    # jvp reads what save_for_forward kept; backward reads only save_for_backward's tensors
    "jvp": "tangent(Mul, X(), Y())",
    "jvp_setup_context": "tangent(MulSetup, X(), Y())",
    "backward": "backward(Mul, X().requires_grad_(), Y())",
    "backward_setup_context": "backward(MulSetup, X().requires_grad_(), Y())",
    "no_grad_inputs": "plain(Mul, X(), Y())",
}


def test_save_for_forward_is_seen_by_jvp_only():
    assert_agree(SAVE_FOR_FORWARD, setup=FUNCTIONS)
