"""Saved values a derivative computes from an output (``S.sym_size(-1)`` in _linalg_svd's entry of
derivatives.yaml) are taken after the forward: operators whose formulas save one run with grad on,
record upstream's node, and take the same path as upstream (whether the values with grad on
equal those without it: upstream's svdvals computes the full SVD when grad is on)."""

from __future__ import annotations

import pytest

from torchnative.testing.upstream import available, run_both

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

PROGRAM = r'''
import json, torch
torch.manual_seed(0)
a = torch.randn(4, 3, dtype=torch.float64)
out = {}
for name, f in {"svdvals": torch.linalg.svdvals, "pinv": torch.linalg.pinv,
                "norm2": lambda t: torch.linalg.matrix_norm(t, ord=2),
                "nuc": lambda t: torch.linalg.matrix_norm(t, ord="nuc"),
                "svd_S": lambda t: torch.linalg.svd(t, full_matrices=True)[1]}.items():
    with_grad = f(a.clone().requires_grad_())
    out[name] = [with_grad.requires_grad, with_grad.grad_fn.name(),
                 bool(torch.equal(with_grad.detach(), f(a)))]
print(json.dumps(out))
'''


def test_forward_with_grad_on_agrees_with_upstream():
    ours, theirs = run_both(PROGRAM)
    assert all(v[0] for v in theirs.values())
    assert ours == theirs
