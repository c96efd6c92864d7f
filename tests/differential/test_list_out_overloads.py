"""The out= overloads whose out is a list of tensors (``-> ()`` in their schemas), compared with
upstream in separate processes: every element of out is written, the call returns None, and the
checks are upstream's -- split_copy copy_()s each part (casting, broadcasting, never resizing),
split_with_sizes_copy and unbind_copy resize each out and want the part's dtype exactly, and
torchgen's generated ones (unsafe_split, _foreach_*) resize and check the dtype after an
internal assert on the count."""

from __future__ import annotations

import json

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json, warnings
warnings.simplefilter("ignore")
import torch
x = torch.arange(12.).reshape(6, 2)
A = torch.ops.aten
calls = {
    "split_copy": lambda out: A.split_copy.Tensor_out(x, 2, 0, out=out),
    "split_with_sizes_copy": lambda out: torch.split_with_sizes_copy(x, [2, 2, 2], out=out),
    "unsafe_split": lambda out: A.unsafe_split.Tensor_out(x, 2, 0, out=out),
    "unsafe_split_with_sizes": lambda out: A.unsafe_split_with_sizes.out(x, [2, 2, 2], 0, out=out),
    "unbind_copy": lambda out: torch.unbind_copy(x[:3, 0], 0, out=out),
    "foreach_add": lambda out: A._foreach_add.Scalar_out([x[:2], x[2:4], x[4:]], 1.0, out=out),
}
outs = {
    "fits": lambda shape: [torch.full(shape, -1.) for _ in range(3)],
    "too_few": lambda shape: [torch.full(shape, -1.) for _ in range(2)],
    "int64": lambda shape: [torch.full(shape, -1, dtype=torch.int64) for _ in range(3)],
    "wrong_shape": lambda shape: [torch.full((3, 2), -1.) for _ in range(3)],
    "empty": lambda shape: [torch.empty(0) for _ in range(3)],
}
res = {}
for name, f in calls.items():
    shape = (2,) if name == "unbind_copy" else (2, 2)
    for label, make in outs.items():
        out = make(shape)
        try:
            r = f(out)
            res[f"{name}/{label}"] = {"returned": repr(r), "out": [o.tolist() for o in out],
                                      "dtypes": [str(o.dtype) for o in out]}
        except Exception as exc:
            msg = str(exc).split(" at ")[0] if "INTERNAL ASSERT" in str(exc) else str(exc)
            res[f"{name}/{label}"] = {"raised": type(exc).__name__, "message": msg}
print(json.dumps(res))
'''


def test_list_outs_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    # the program's own cases on upstream: the parts land in out, None is returned
    assert theirs["split_with_sizes_copy/fits"]["returned"] == "None"
    assert theirs["split_with_sizes_copy/fits"]["out"][1] == [[4.0, 5.0], [6.0, 7.0]]
    assert theirs["unbind_copy/int64"]["raised"] == "RuntimeError"
    assert ours.keys() == theirs.keys()
    wrong = {k: (ours[k], theirs[k]) for k in theirs if ours[k] != theirs[k]}
    assert not wrong, json.dumps(wrong, indent=1)
