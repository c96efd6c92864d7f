"""Indexing as a user writes it -- negative and zero steps, Ellipsis and None, too many indices,
masks of the wrong shape, float, string, set and ``__index__`` indices, lists of lists (a tuple,
with upstream's deprecation warning, while a short sequence holds sequences, slices, None or
Ellipsis), numpy indices, assignments that broadcast or do not fit (expand's message), masks
and duplicate indices in assignments, and the indexing operators around them -- values,
errors and warnings compared with upstream's."""
from __future__ import annotations

import json

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = r'''
import json, warnings
import numpy as np
import torch

torch.manual_seed(0)
out = []


def show(r):
    if isinstance(r, torch.Tensor):
        r = [str(r.dtype), list(r.shape), r.tolist() if r.numel() < 30 else None]
    return repr(r)


def tr(name, f):
    out.append(attempt(name, f, show))


class Index:
    def __index__(self):
        return 1


x = torch.arange(24.).reshape(2, 3, 4)
def S(f):
    y = x.clone(); f(y); return y
tr("neg step", lambda: x[::-1])
tr("step 0", lambda: x[::0])
tr("ellipsis none", lambda: x[..., None, 1])
tr("two ellipsis", lambda: x[..., ...])
tr("too many idx", lambda: x[0, 0, 0, 0])
tr("bool mask", lambda: x[x > 20])
tr("bool mask wrong shape", lambda: x[torch.tensor([True, False, True])])
tr("bool list", lambda: x[[True, False]])
tr("float idx", lambda: x[1.5])
tr("float tensor idx", lambda: x[torch.tensor([0.])])
tr("list of lists", lambda: x[[[0, 1], [1, 0]]])
tr("tuple of lists", lambda: x[[0, 1], [1, 2]])
tr("mixed adv", lambda: x[:, [0, 2], 1:3])
tr("adv separated", lambda: x[[0, 1], :, [0, 1]])
tr("np array idx", lambda: x[np.array([0, 1])])
tr("np bool idx", lambda: x[np.array([True, False])])
tr("np int scalar", lambda: x[np.int64(1)])
tr("0d tensor idx", lambda: x[torch.tensor(1)])
tr("int tensor float", lambda: x[torch.tensor(1.)])
tr("str idx", lambda: x["a"])
tr("None only", lambda: x[None])
tr("empty list", lambda: x[[]])
tr("empty tensor idx", lambda: x[torch.tensor([], dtype=torch.long)])
tr("set idx", lambda: x[{0}])
tr("oob slice", lambda: x[5:10])
tr("neg oob", lambda: x[:, -5])
tr("setitem broadcast", lambda: S(lambda y: y.__setitem__((0,), torch.ones(4))))
tr("setitem bad shape", lambda: S(lambda y: y.__setitem__((0,), torch.ones(2))))
tr("setitem mask", lambda: S(lambda y: y.__setitem__(y > 20, 0)))
tr("setitem mask tensor", lambda: S(lambda y: y.__setitem__(y > 20, torch.tensor([1., 2., 3.]))))
tr("setitem mask wrong count", lambda: S(lambda y: y.__setitem__(y > 20, torch.tensor([1., 2.]))))
tr("setitem adv dup",
   lambda: S(lambda y: y.__setitem__(([0, 0], [1, 1], [2, 2]), torch.tensor([5., 6.]))))
tr("setitem int into float", lambda: S(lambda y: y.__setitem__(0, 7)))
tr("setitem float into int", lambda: (lambda z: (z.__setitem__(0, 2.7), z)[1])(torch.arange(3)))
tr("setitem tensor dtype",
   lambda: (lambda z: (z.__setitem__(0, torch.tensor(2.7)), z)[1])(torch.arange(3)))
tr("setitem list", lambda: S(lambda y: y.__setitem__((0, 0), [1, 2, 3, 4])))
tr("setitem np", lambda: S(lambda y: y.__setitem__((0, 0), np.array([1, 2, 3, 4]))))
tr("setitem neg step", lambda: S(lambda y: y.__setitem__((0, 0, slice(None, None, -1)), 1)))
tr("index_put accumulate", lambda: torch.zeros(3).index_put_(
    (torch.tensor([0, 0, 2]),), torch.tensor([1., 2., 3.]), accumulate=True))
tr("index_add", lambda: torch.zeros(3).index_add_(0, torch.tensor([0, 0]), torch.tensor([1., 2.])))
tr("masked_select", lambda: x.masked_select(x > 21))
tr("where 1arg", lambda: torch.where(x > 21))
tr("nonzero", lambda: (x > 21).nonzero())
tr("take", lambda: x.take(torch.tensor([0, 23])))
tr("take oob", lambda: x.take(torch.tensor([24])))
tr("narrow", lambda: x.narrow(2, 1, 2))
tr("narrow bad", lambda: x.narrow(2, 3, 2))
tr("select neg", lambda: x.select(1, -1))
tr("unbind", lambda: len(x.unbind(1)))
tr("chunk", lambda: [c.shape for c in x.chunk(3, 2)])
tr("split list", lambda: [c.shape for c in x.split([1, 3], 2)])
tr("split bad", lambda: x.split([1, 2], 2))
tr("index_select int32", lambda: x.index_select(2, torch.tensor([0, 1], dtype=torch.int32)))
tr("gather int32", lambda: x.gather(2, torch.zeros(2, 3, 1, dtype=torch.int32)))
tr("idx int32", lambda: x[torch.tensor([0, 1], dtype=torch.int32)])
tr("idx uint8 mask", lambda: x[torch.tensor([1, 0], dtype=torch.uint8)])
tr("idx int8", lambda: x[torch.tensor([1, 0], dtype=torch.int8)])
tr("diag neg", lambda: torch.arange(9.).reshape(3, 3).diagonal(-1))
tr("tril", lambda: torch.ones(3, 3).tril(-1))
tr("flip", lambda: x.flip(0, 2)[0, 0])
tr("roll", lambda: torch.arange(5).roll(2))
tr("repeat_interleave", lambda: torch.tensor([1, 2]).repeat_interleave(torch.tensor([2, 1])))
tr("unique", lambda: torch.tensor([3, 1, 3, 2]).unique(return_counts=True))
tr("sort stable", lambda: torch.tensor([2, 1, 2, 1]).sort(stable=True))
tr("argsort desc", lambda: torch.tensor([2., float('nan'), 1.]).argsort(descending=True))
tr("searchsorted", lambda: torch.searchsorted(torch.tensor([1, 3, 5]), torch.tensor([0, 3, 6])))
tr("bucketize",
   lambda: torch.bucketize(torch.tensor([0.5, 3.]), torch.tensor([1., 2., 3.]), right=True))
tr("histc", lambda: torch.histc(torch.tensor([1., 2., 1.]), bins=4, min=0, max=3))
tr("bincount", lambda: torch.bincount(torch.tensor([0, 1, 1, 3])))
tr("cumsum int", lambda: torch.tensor([1, 2, 3], dtype=torch.int8).cumsum(0))
tr("einsum", lambda: torch.einsum("ij,jk->ik", torch.ones(2, 3), torch.ones(3, 2)))
tr("einsum bad", lambda: torch.einsum("ij,jk->ik", torch.ones(2, 3), torch.ones(2, 2)))
tr("meshgrid", lambda: [t.shape for t in torch.meshgrid(torch.arange(2), torch.arange(3),
                                                        indexing="ij")])
tr("meshgrid warn", lambda: [t.shape for t in torch.meshgrid(torch.arange(2), torch.arange(3))])
tr("__index__ object", lambda: x[Index()])
tr("__index__ in tuple", lambda: x[0, Index()])
tr("range index", lambda: x[range(2)])
tr("tuple in list", lambda: x[[(0, 1), (1, 0)]])
tr("list with None", lambda: x[[0, None]])
tr("list with slice", lambda: x[[0, slice(None)]])
tr("long list", lambda: x[[0] * 40])
tr("setitem leading ones", lambda: S(lambda y: y.__setitem__((0, 0), torch.ones(1, 1, 4))))
tr("setitem ones to 0d", lambda: S(lambda y: y.__setitem__((0, 0, 0), torch.ones(1, 1))))
tr("setitem too many dims", lambda: S(lambda y: y.__setitem__((0, 0), torch.ones(2, 4))))
tr("setitem adv leading ones", lambda: S(lambda y: y.__setitem__(([0, 1],), torch.ones(1, 3, 4))))
print(json.dumps(out))
'''


def test_indexing_as_users_write_it():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = sides.on_both(PROGRAM)
    byname = {rec[0]: rec for rec in theirs}
    assert byname["list of lists"][3]  # the deprecation warning is given
    assert byname["setitem bad shape"][1] == "RuntimeError"
    assert ours == theirs, json.dumps([(o, t) for o, t in zip(ours, theirs) if o != t], indent=1)
