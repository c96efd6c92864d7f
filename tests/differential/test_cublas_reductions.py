"""cuBLAS's reduced-precision reduction switches
(``torch.backends.cuda.matmul.allow_{fp16,bf16}_reduced_precision_reduction[_split_k]`` and their
torch._C getters and setters) against upstream torch 2.13.0, each in its own process: values,
errors and the state an error leaves."""

from __future__ import annotations

import pytest

from torchnative.testing.upstream import available, run_both

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

PROGRAM = r'''
import json, torch
C, M = torch._C, torch.backends.cuda.matmul
out = {}
def outcome(f):
    try:
        return [repr(f())]
    except Exception as e:
        return [type(e).__name__, str(e)]
for kind in ("fp16", "bf16"):
    get = getattr(C, f"_get_cublas_allow_{kind}_reduced_precision_reduction")
    set_ = getattr(C, f"_set_cublas_allow_{kind}_reduced_precision_reduction")
    attr = f"allow_{kind}_reduced_precision_reduction"
    out[f"{kind} default"] = outcome(get)
    for i, args in enumerate([(False,), (False, False), (True, False), (True,), (1,), (True, "x"), (),
                              (True, True, True), (False, True)]):
        out[f"{kind} set {i}"] = outcome(lambda: set_(*args)) + outcome(get)
    for i, value in enumerate([False, (False, False), (True, False), True, [True, True], 1, (True,)]):
        out[f"{kind} attr {i}"] = outcome(lambda: setattr(M, attr, value)) + outcome(
            lambda: (getattr(M, attr), getattr(M, attr + "_split_k")))
print(json.dumps(out))
'''


def test_reduced_precision_reduction_switches_as_upstream():
    ours, theirs = run_both(PROGRAM)
    # the program reaches what it tests: the split-K refusal and the bool check
    assert "split" in theirs["fp16 set 2"][1]
    assert theirs["bf16 set 4"][0] == "RuntimeError"
    different = {k: (ours.get(k), v) for k, v in theirs.items() if ours.get(k) != v}
    assert not different
    assert ours.keys() == theirs.keys()
