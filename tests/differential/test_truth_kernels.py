"""``torch._is_all_true`` / ``torch._is_any_true`` against upstream (empty, 0-d, n-d)."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = """
import json, torch
out = []
for t in [torch.tensor([True, False]), torch.ones(2, 3, dtype=torch.bool),
          torch.tensor([], dtype=torch.bool), torch.tensor(False), torch.zeros(4, dtype=torch.bool)]:
    a, b = torch._is_all_true(t), torch._is_any_true(t)
    out.append([a.item(), b.item(), list(a.shape), str(a.dtype)])
print(json.dumps(out))
"""


def test_truth_kernels_as_upstream():
    if not upstream.available():
        pytest.skip(upstream.missing("_is_all_true comparison"))
    ours, up = upstream.run_both(PROGRAM)
    assert ours == up
    assert [r[0] for r in up] == [False, True, True, False, False]
