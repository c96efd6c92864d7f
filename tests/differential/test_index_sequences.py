"""Python sequences and numpy arrays as indices, against upstream: an empty list, float lists
and arrays (converted to int64, truncating, as upstream's indexing_tensor_from_data), bool masks,
and the same in assignments (transformers' n-gram ban sets ``scores[i, banned] = -inf`` with a
possibly empty ``banned`` list)."""

from __future__ import annotations

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = """
warnings.filterwarnings("ignore")
x = torch.arange(10.).reshape(2, 5)
out = {}
cases = {
    "empty list": lambda: x[0, []],
    "float list": lambda: x[1, [1.0, 2.9]],
    "float array": lambda: x[0, np.array([1.0, 4.0])],
    "empty float array": lambda: x[:, np.array([], dtype=np.float64)],
    "bool list": lambda: x[1, [True, False, True, False, True]],
    "int list": lambda: x[[1, 0], [3, 1]],
    "nested empty tuple": lambda: x[((),)],
}
for name, f in cases.items():
    out[name] = outcome(f, bits=True)
s = torch.zeros(2, 5)
s[0, []] = -float("inf")
s[1, [1.0, 3.0]] = 2
out["assign"] = encode(s, bits=True)
print(json.dumps(out))
"""


def test_sequence_indices_as_upstream():
    if not upstream.available():
        pytest.skip(upstream.missing("sequence index comparison"))
    ours, up = sides.on_both(PROGRAM)
    assert up["empty list"]["shape"] == [0]
    assert ours == up
