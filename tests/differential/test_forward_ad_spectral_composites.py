"""Forward AD through the spectral composites (eigvalsh, eigvals, svdvals, matrix_norm(ord=2),
cond): upstream's composites compute the eigen/singular vectors when a backward *or a tangent*
may need them (``_may_require_fw_or_bw_grad``), so the tangents exist; compared with upstream,
with a control that plain inputs still take the values-only path (no vectors asked for)."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json
import torch
import torch.autograd.forward_ad as fwAD

torch.manual_seed(0)
A = torch.randn(3, 3, dtype=torch.float64)
S = A + A.mT
T = torch.randn(3, 3, dtype=torch.float64)
out = {}
fns = {"eigvalsh": lambda x: torch.linalg.eigvalsh(x + x.mT),
       "eigvals": lambda x: torch.linalg.eigvals(x + x.mT).real,
       "svdvals": torch.linalg.svdvals,
       "matrix_norm_2": lambda x: torch.linalg.matrix_norm(x, 2),
       "cond": torch.linalg.cond}
for name, f in fns.items():
    with fwAD.dual_level():
        r = f(fwAD.make_dual(A, T))
        p, t = fwAD.unpack_dual(r)
        out[name] = [p.tolist(), t.tolist()]
print(json.dumps(out))
'''


def test_spectral_composites_carry_tangents_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    assert set(ours) == set(theirs)
    for name in theirs:
        for a, b in zip(ours[name], theirs[name]):
            assert a == pytest.approx(b, rel=1e-9, abs=1e-12), name


def test_plain_inputs_ask_for_values_only():
    import torch

    from torchnative.csrc.kernels.support.nn_util import may_require_fw_or_bw_grad

    x = torch.randn(2, 2)
    assert may_require_fw_or_bw_grad(x) is False
    assert may_require_fw_or_bw_grad(x.requires_grad_()) is True
    with torch.no_grad():
        assert may_require_fw_or_bw_grad(x) is False
