"""The flash kernel's results over their own buffers: where the transposed view is itself
C-contiguous (a decode step's single query row), the tensor is a kernel result whose storage is
made on first use; it must be the tensor the general construction makes (strides, storage bytes
and size, the view's place in it, writes seen through the storage), and the kernel's outputs
keep upstream's strides."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from torchnative.csrc.kernels import nn_attention as A
from torchnative.csrc.core.dtypes import BY_NAME


def _describe(t):
    st = t.untyped_storage()
    return (tuple(t.shape), t.stride(), t.storage_offset(), st.nbytes(),
            t.data_ptr() - st.data_ptr(), t.is_contiguous(), t._np.strides, t.tolist())


# (buffer shape, its transpose, the tensor's strides)
GEOMETRIES = [((1, 1, 9), (0, 2, 1), (9, 1, 9)), ((2, 1, 9), (0, 2, 1), (9, 1, 9)),
              ((1, 4, 9), (0, 2, 1), (36, 1, 9)), ((1, 1, 1), (0, 2, 1), (1, 1, 1)),
              ((1, 1, 9, 64), (0, 2, 1, 3), (576, 64, 576, 1)),
              ((1, 3, 9, 64), (0, 2, 1, 3), (1728, 64, 576, 1)), ((0, 1, 9), (0, 2, 1), (9, 1, 9))]


def _general(buf, perm, dt, stride):
    view = buf.transpose(perm)
    return A.make(A.new_storage(buf.nbytes, A.CPU, buf.reshape(-1).view(np.uint8)), dt,
                  view.shape, stride, 0, np_view=view)


@pytest.mark.parametrize("shape,perm,stride", GEOMETRIES, ids=str)
def test_over_buffer_is_the_general_construction(shape, perm, stride):
    f32 = BY_NAME["float32"]
    buf = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    buf2 = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    got = A._over_buffer(buf, buf.transpose(perm), f32, stride)
    want = _general(buf2, perm, f32, stride)
    assert _describe(got) == _describe(want)
    if buf.size:  # the storage is the buffer, and the tensor reads it
        buf.reshape(-1)[-1] = buf2.reshape(-1)[-1] = -7.0
        assert _describe(got) == _describe(want)
        assert np.shares_memory(np.asarray(got.untyped_storage()._data), buf)


def test_decode_outputs_keep_upstreams_strides():
    q = torch.rand(1, 1, 9, 64).transpose(1, 2)
    k, v = torch.rand(1, 3, 24, 64), torch.rand(1, 3, 24, 64)
    out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, False,
                                                                           scale=0.125)[:2]
    assert out.stride() == q.stride() and lse.stride() == (9, 1, 9)
    assert out.untyped_storage().nbytes() == 576 * 4 and lse.untyped_storage().nbytes() == 36
    assert torch.equal(F.scaled_dot_product_attention(q, k, v, scale=0.125, enable_gqa=True), out)
