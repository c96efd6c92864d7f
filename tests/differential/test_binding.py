"""Argument parsing of the generated spellings, compared with upstream's PythonArgParser: keyword
names (a function's ``self`` is spelled ``input``), numpy-style aliases, tensor-likes handed to
their ``__torch_function__``, and the TypeError messages for what neither accepts."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json, torch

class Like:
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return ["handled", func.__name__, len(args), sorted((kwargs or {}))]

CASES = {
    "add_input_kw": lambda: torch.add(input=torch.ones(2), other=torch.ones(2)).tolist(),
    "exp_input_kw": lambda: torch.exp(input=torch.zeros(1)).tolist(),
    "sum_numpy_axis": lambda: torch.sum(torch.ones(2, 3), axis=1, keepdims=True).tolist(),
    "exp_numpy_x": lambda: torch.exp(x=torch.zeros(1)).tolist(),
    "like_first": lambda: torch.add(Like(), 2),
    "like_second": lambda: torch.add(torch.ones(1), Like()),
    "like_in_list": lambda: torch.cat([Like(), torch.ones(1)]),
    "like_functional": lambda: torch.nn.functional.relu(Like()),
    "bad_str": lambda: torch.add("a", 1),
    "bad_object": lambda: torch.mul(object(), torch.ones(1)),
    "bad_method_arg": lambda: torch.ones(1).add(object()),
    "missing_kw": lambda: torch.add(other=torch.ones(1)),
    "unexpected_kw": lambda: torch.exp(torch.ones(1), bogus=1),
}

out = {}
for name, fn in CASES.items():
    try:
        out[name] = ["ok", fn()]
    except Exception as e:
        out[name] = ["raised", type(e).__name__, str(e)]
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def both():
    if not upstream.available():
        pytest.skip("no upstream environment")
    return upstream.run_json_ours(PROGRAM), upstream.run_json(PROGRAM)


def test_cases_are_exercised(both):
    ours, _ = both
    assert len(ours) == 13
    assert sum(v[0] == "raised" for v in ours.values()) >= 4  # the refusals are really tried


@pytest.mark.parametrize("name", ["add_input_kw", "exp_input_kw", "sum_numpy_axis",
                                  "exp_numpy_x", "like_first", "like_second", "like_in_list",
                                  "like_functional", "bad_str", "bad_object", "bad_method_arg",
                                  "missing_kw", "unexpected_kw"])
def test_agrees_with_upstream(both, name):
    """Values exactly; a refusal by its exception type (and its message where we reproduce
    PythonArgParser's wording: the single-signature messages)."""
    ours, theirs = both
    if theirs[name][0] == "ok" or name in WORDED:
        assert ours[name] == theirs[name]
    else:
        assert ours[name][:2] == theirs[name][:2]


WORDED = {"bad_str", "bad_object", "bad_method_arg", "unexpected_kw"}
