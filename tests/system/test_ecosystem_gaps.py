"""Small pieces of torch the ecosystem libraries reach for at import or on their common path,
compared with upstream in separate processes: ``torch.profiler.kineto_available()`` (read when
Lightning imports its profilers) and ``Tensor.to_dense()`` on a strided tensor
(sentence-transformers' similarity functions end with it)."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json
import torch

out = {}
out["kineto_available_is_bool"] = type(torch.profiler.kineto_available()).__name__
x = torch.arange(6.).reshape(2, 3).requires_grad_()
a = x.to_dense()
b = x.t().to_dense(torch.float64)
b.sum().backward()
out["to_dense"] = [a is x, str(b.dtype), b.grad_fn.name(), b.is_contiguous(), b.tolist(),
                   x.grad.tolist(), str(torch.ones(2, dtype=torch.int64).to_dense(torch.float32).dtype)]
try:
    x.to_dense(1.5)
except TypeError as e:
    out["to_dense_bad_dtype"] = "TypeError"
print(json.dumps(out))
'''


def test_gaps_behave_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    assert theirs["to_dense"][0] is True and theirs["to_dense_bad_dtype"] == "TypeError"
    assert ours == theirs


def test_kineto_is_not_built_in():
    """Ours has no Kineto profiler library: the question is answered False (a build without it
    answers the same), not refused, so libraries that only ask it import."""
    import torch

    assert torch.profiler.kineto_available() is False
