"""The arrays view kernels hand their views: where a kernel takes numpy's own view of its base's
array (select, slice, view, transpose), the view reads and writes the same elements as the array
``numpy_view`` builds over the storage for that geometry (same shape, byte strides, first element,
writability); and the door's keyword check still sends a keyword tensor that requires grad to
autograd."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from torchnative.csrc.core.tensor import numpy_view


def _same_array(t):
    ref = numpy_view(t._storage, t._dtype, t._size, t._stride, t._offset)
    a = t._np
    assert a.shape == ref.shape and a.dtype == ref.dtype
    assert a.flags.writeable == ref.flags.writeable
    if a.size:
        assert a.strides == ref.strides
        assert a.__array_interface__["data"][0] == ref.__array_interface__["data"][0]
        assert np.array_equal(a, ref)


def _bases():
    x = torch.arange(4 * 5 * 6, dtype=torch.float32).reshape(4, 5, 6)
    ro = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    ro.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a read-only array (warned once per process)
        from_ro = torch.from_numpy(ro)
    return [x, x.transpose(0, 2), x[1:, 2:], x[:, :, 1], torch.arange(7), from_ro,
            torch.empty(3, 0, 2), x.permute(2, 0, 1)[1:]]


@pytest.mark.parametrize("case", range(8))
def test_select_slice_arrays_match_the_storage_view(case):
    t = _bases()[case]
    for d in range(t.dim()):
        n = t.shape[d]
        for i in {0, n - 1, -1, -n} if n else ():
            _same_array(t.select(d, i))
        for start, end, step in ((None, None, 1), (1, None, 2), (-3, -1, 1), (2, 2, 1),
                                 (-100, 100, 3), (5, 1, 1), (0, 1, 1)):
            _same_array(t[(slice(None),) * d + (slice(start, end, step),)])
    if t.dim() >= 2:
        _same_array(t.transpose(0, -1))
        _same_array(t.transpose(-2, 1))
    if t.is_contiguous() and t.numel():
        _same_array(t.view(-1))
        _same_array(t.view(t.numel(), 1))


def test_views_share_memory_and_version():
    x = torch.zeros(3, 4)
    v = x[1]
    s = x[:, 1:3]
    v[0] = 5.0
    s[2, 1] = 7.0
    assert x[1, 0].item() == 5.0 and x[2, 2].item() == 7.0
    assert x._version == v._version == s._version == 2
    assert v._base is x and s._base is x and x[1][2:]._base is x
    one = torch.arange(3.0)[1]  # a 1-d tensor's element: a 0-dim view
    assert one.dim() == 0 and one._np.shape == () and one._base is not None


def test_view_sizes_parsed_as_before():
    x = torch.arange(12.0)
    assert x.view(3, 4).shape == (3, 4) and x.view(-1, 6).shape == (2, 6)
    with pytest.raises(RuntimeError, match="invalid for input of size 12"):
        x.view(5, 3)
    with pytest.raises(RuntimeError, match="invalid shape dimension -2"):
        x.view(-2, -6)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        x.view(-1, -1)
    assert type(x.view(np.int64(3), 4).shape[0]) is int
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.view(3, 4).transpose(0, 2)
    with pytest.raises(IndexError, match="out of range"):
        x.select(0, 12)


def test_keyword_tensor_that_requires_grad_is_recorded():
    from torchnative.csrc.dispatch.call import op
    from torchnative.csrc.dispatch.door import aten_dispatch

    a = torch.rand(3)
    w = torch.rand(3, requires_grad=True)
    out = aten_dispatch(op("add.Tensor"), (a,), {"other": w, "alpha": 2})
    assert out.grad_fn is not None
    out.sum().backward()
    assert torch.equal(w.grad, torch.full((3,), 2.0))
    plain = aten_dispatch(op("add.Tensor"), (a,), {"other": w.detach(), "alpha": 2})
    assert plain.grad_fn is None and torch.equal(plain, out.detach())
