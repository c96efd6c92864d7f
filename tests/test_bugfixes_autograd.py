"""Autograd-layer bugs found in use, each compared with upstream in a separate process."""
from __future__ import annotations

import json

from torchnative.testing.upstream import run_json, run_json_ours

from bugfix_probe import PRELUDE

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
    cases = {k: call_of(op, a) for k, (op, a) in CPP_CALLS.items()}
    return PRELUDE + SETUP + f"print(json.dumps({{k: run(v) for k, v in {cases!r}.items()}}))\n"


def test_cpp_op_takes_an_int_for_an_int_list():
    ours = run_json_ours("from torchnative.csrc.autograd.generated import CppOp\n" + _program(
        lambda op, a: f"CppOp('aten::{op}')({a})"))
    # upstream's Python binding of the operator accepts what its C++ signature accepts
    theirs = run_json(_program(lambda op, a: f"torch.ops.aten.{op}({a})"))
    bad = {k: (ours[k], theirs[k]) for k in CPP_CALLS if ours[k] != theirs[k]}
    assert not bad, json.dumps(bad, indent=1)
