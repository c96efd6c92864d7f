"""``torch._C._any_output_is_alias_to_input_or_output``, the check torch.library runs after a
custom op's kernel: outputs sharing a storage with an input or another output, compared with
upstream (fresh results, views, the input returned, an output twice, empty tensors, nested
lists), and a custom op that returns a view of its input refused as upstream refuses it."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json
import torch

f = torch._C._any_output_is_alias_to_input_or_output
x = torch.randn(1, 1, 6)
w = torch.randn(6)
y = x * 2
cases = {
    "fresh": f((x, w), {}, (y,)),
    "view_of_input": f((x, w), {}, (x.view(6),)),
    "input_itself": f((x,), {}, (x,)),
    "output_twice": f((x,), {}, (y, y)),
    "output_and_its_view": f((x,), {}, (y, y.view(-1))),
    "kwarg_input": f((), {"a": x}, (x[0],)),
    "nested": f(([w, [x]],), {}, ([x.view(6, 1).t()],)),
    "empty": f((torch.empty(0),), {}, (torch.empty(0),)),
    "scalars": f((1, 2.0, None), {}, (torch.ones(2),)),
    "from_numpy": f((x,), {}, (torch.from_numpy(x.numpy()),)),
}

@torch.library.custom_op("tn_alias::view_back", mutates_args=())
def view_back(t: torch.Tensor) -> torch.Tensor:
    return t.view(-1)

try:
    view_back(x)
    cases["custom_op_view"] = "no error"
except RuntimeError as e:
    cases["custom_op_view"] = str(e).split(".")[0]
print(json.dumps(cases))
'''


def test_alias_check_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    assert theirs["view_of_input"] is True and theirs["fresh"] is False
    assert ours == theirs
