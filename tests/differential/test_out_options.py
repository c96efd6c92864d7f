"""A factory's out= overload beside dtype=/layout= (torch.ones(..., dtype=, out=), arange,
eye, linspace, randn, empty ...): the options must be out's own, else upstream's binding
raises "dtype Double does not match dtype of out parameter (Float)"; device= and requires_grad=
pass. Compared with upstream case for case, each spelling called again through the call cache."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import torch, json
def tr(f):
    try: return str(f().tolist())
    except Exception as e: return type(e).__name__+': '+str(e)
cases = [(lambda: torch.ones((2,3), dtype=torch.float64, out=torch.empty(4))),
 (lambda: torch.zeros((2,), dtype=torch.int64, out=torch.empty(2))),
 (lambda: torch.arange(3, dtype=torch.float64, out=torch.empty(3))),
 (lambda: torch.ones((2,), layout=torch.strided, out=torch.empty(2))),
 (lambda: torch.ones((2,), device='cpu', out=torch.empty(2))),
 (lambda: torch.ones((2,), requires_grad=True, out=torch.empty(2))),
 (lambda: torch.ones((2,), dtype=torch.float32, out=torch.empty(2))),
 (lambda: torch.randn((2,), dtype=torch.float64, out=torch.empty(2)).shape),
 (lambda: torch.eye(2, dtype=torch.float64, out=torch.empty(2, 2))),
 (lambda: torch.full((2,), 3, dtype=torch.int32, out=torch.empty(2, dtype=torch.int32))),
 (lambda: torch.linspace(0, 1, 3, dtype=torch.float16, out=torch.empty(3))),
 (lambda: torch.empty((2,), dtype=torch.int8, out=torch.empty(2)))]
print(json.dumps([tr(c) for c in cases] + [tr(c) for c in cases]))
'''


def test_out_options_checked_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    assert theirs[0].startswith("RuntimeError: dtype Double does not match dtype of out parameter")
    assert ours == theirs  # every case twice: the second call goes through the call cache
