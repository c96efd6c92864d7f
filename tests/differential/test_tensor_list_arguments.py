"""Tensor lists at the binding, and where ``torch._C``'s warnings land, against upstream.

PythonArgParser checks a ``TensorList`` or ``Tensor?[]`` parameter element by element and raises
at the first element that is not a tensor ("expected Tensor as element 1 in argument 0, but got
NoneType"), whichever signatures remain; ``None`` is no tensor there either. A TORCH_WARN lands on
the innermost Python frame, the caller's line; ``index_put_`` with one boolean mask and a
one-element value becomes ``masked_fill_``, which warns on an expanded tensor too.
"""

from __future__ import annotations

import pytest

import sides
from torchnative.testing.upstream import available

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

LISTS = r'''
x = torch.zeros(2)
m = torch.tensor([True, False])
cases = {
    "cat None": lambda: torch.cat([x, None]),
    "cat int": lambda: torch.cat((x, 1)),
    "cat keyword": lambda: torch.cat(tensors=[x, None]),
    "cat dim first": lambda: torch.cat([x, 2.5], 0),
    "stack str": lambda: torch.stack([x, "a"]),
    "stack numpy": lambda: torch.stack([x, np.float64(1.0)]),
    "meshgrid None": lambda: torch.meshgrid(x, None, indexing="ij"),
    "block_diag None": lambda: torch.block_diag(x, None),
    "index_put_ None": lambda: x.clone().index_put_((None,), torch.tensor(1.0)),
    "index_put_ int": lambda: x.clone().index_put_((1,), torch.tensor(1.0)),
    "index_put None second": lambda: torch.index_put(x, [m, None], torch.tensor(1.0)),
    "index_put ok": lambda: torch.index_put(x, [m], torch.tensor(3.0)),
    "cat ok": lambda: torch.cat((x, x)),
    "cat empty list": lambda: torch.cat([]),
    "cat generator": lambda: torch.cat(t for t in (x, x)),
    "ops index_put None": lambda: torch.ops.aten.index_put.default(x, [None], torch.tensor(1.0)),
    "ops index_put mask": lambda: torch.ops.aten.index_put.default(x, [None, m][1:], torch.tensor(4.0)),
}
print(json.dumps({k: outcome(f) for k, f in cases.items()}))
'''


def test_tensor_list_elements_are_checked_as_upstream_checks_them():
    ours, theirs = sides.on_both(LISTS)
    assert ours.keys() == theirs.keys()
    # the cases reach the element check: most refuse with the element's TypeError
    assert sum("expected Tensor as element" in str(v) for v in theirs.values()) >= 10
    wrong = sides.differing(ours, theirs)
    assert wrong == {}


WARNINGS = r'''
import sys, warnings
HERE = sys._getframe().f_code.co_filename
m = torch.tensor([[True, False, True], [False, False, False]])


def caught(f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            f()
        except Exception as e:
            return [type(e).__name__]
    return [[str(i.message)[:40], i.category.__name__, i.filename == HERE, i.lineno] for i in w]


def setitem():
    y = torch.zeros(1, 3).expand(2, 3)
    y[m] = 2.0


cases = {
    "masked_fill_ expanded": lambda: torch.zeros(1, 3).expand(2, 3).masked_fill_(m, 1.0),
    "setitem expanded": setitem,
    "index_put_ expanded": lambda: torch.zeros(1, 3).expand(2, 3).index_put_(
        (m[:, 0],), torch.tensor(3.0)),
    "index_put_ expanded accumulate": lambda: torch.zeros(1, 3).expand(2, 3).index_put_(
        (m[:, 0],), torch.tensor(3.0), accumulate=True),
    "var correction": lambda: torch.zeros(3).var(dim=0, correction=5),
    "chain_matmul": lambda: torch.chain_matmul(torch.eye(2), torch.eye(2)),
    "is_pinned device": lambda: torch.ones(2).is_pinned("cpu"),
    "cross without dim": lambda: torch.cross(torch.ones(3, 3), torch.ones(3, 3)),
    "x.T of 3 dims": lambda: torch.ones(2, 2, 2).T,
    "torch.range": lambda: torch.range(0, 2),
}
print(json.dumps({k: caught(f) for k, f in cases.items()}))
'''


def test_warnings_land_where_upstream_puts_them():
    ours, theirs = sides.on_both(WARNINGS)
    assert ours.keys() == theirs.keys()
    # every case warns on upstream, nearly all of them on this program's own lines (chain_matmul
    # on torch/functional.py's, upstream's Python that calls in)
    assert all(v and isinstance(v[0], list) for v in theirs.values()), theirs
    assert sum(w[2] for v in theirs.values() for w in v) >= 9
    wrong = sides.differing(ours, theirs)
    assert wrong == {}
