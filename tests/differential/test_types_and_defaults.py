"""Types and defaults a user meets: ``Tensor.type`` with a dtype, a legacy type or its name
(an unknown name refused as upstream refuses it), the legacy types' ``isinstance``, the default
dtype and its complex partner (``torch.tensor(1j)`` refused under a bfloat16 default, complex32
under float16 with its warning), ``set_default_tensor_type``'s deprecation, dtype, finfo and iinfo
attributes, storage and layout queries, ``.T``/``.mT``/``.H``, real and imaginary views --
compared with upstream, values, errors and warnings."""
from __future__ import annotations

import json

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = r'''
import warnings

torch.manual_seed(0)
out = []


def show(r):
    if isinstance(r, torch.Tensor):
        r = [str(r.dtype), list(r.shape), r.tolist() if r.numel() < 8 else None]
    return repr(r)


def tr(name, f):
    out.append(attempt(name, f, show))
    torch.set_default_dtype(torch.float32)  # (a case that failed half way leaves it otherwise)


x = torch.tensor([1.5, -2.5])
tr("type()", lambda: x.type())
tr("type(Double)", lambda: x.type(torch.DoubleTensor))
tr("type(str)", lambda: x.type("torch.IntTensor"))
tr("type(dtype)", lambda: x.type(torch.int8))
tr("type(bad str)", lambda: x.type("torch.FooTensor"))
tr("type non_blocking", lambda: x.type(torch.float64, non_blocking=True))
tr("is_cuda", lambda: x.is_cuda)
tr("device index", lambda: x.device.index)
tr("get_device", lambda: x.get_device())
tr("default device", lambda: torch.get_default_device())
tr("isinstance FloatTensor", lambda: isinstance(x, torch.FloatTensor))
tr("isinstance DoubleTensor", lambda: isinstance(x, torch.DoubleTensor))
tr("isinstance Tensor", lambda: isinstance(torch.FloatTensor(2), torch.Tensor))
tr("set_default_tensor_type",
   lambda: (torch.set_default_tensor_type(torch.DoubleTensor), torch.tensor([1.]).dtype,
            torch.set_default_tensor_type(torch.FloatTensor))[1])
tr("set_default_dtype int", lambda: torch.set_default_dtype(torch.int64))
tr("set_default_dtype f64",
   lambda: (torch.set_default_dtype(torch.float64), torch.tensor([1.5]).dtype,
            torch.arange(2.).dtype, torch.tensor(1j).dtype)[1:])
tr("set_default_dtype f16",
   lambda: (torch.set_default_dtype(torch.float16), torch.tensor([1.5]).dtype,
            torch.tensor(1j).dtype)[1:])
tr("set_default_dtype bf16",
   lambda: (torch.set_default_dtype(torch.bfloat16), torch.tensor(1j).dtype)[1])
tr("dtype attrs",
   lambda: (torch.float16.is_floating_point, torch.int8.is_signed, torch.uint8.is_signed,
            torch.complex64.to_real(), torch.float32.to_complex(), torch.bfloat16.itemsize))
tr("finfo bf16",
   lambda: (torch.finfo(torch.bfloat16).eps, torch.finfo(torch.bfloat16).tiny, torch.finfo().max))
tr("iinfo uint16", lambda: (torch.iinfo(torch.uint16).max, torch.iinfo(torch.int32).bits))
tr("iinfo float", lambda: torch.iinfo(torch.float32))
tr("finfo int", lambda: torch.finfo(torch.int32))
tr("element_size", lambda: (x.element_size(), x.nbytes, x.itemsize))
tr("storage",
   lambda: (type(x.storage()).__name__, x.untyped_storage().nbytes(), x.storage().size()))
tr("data_ptr equal view", lambda: x[1:].data_ptr() - x.data_ptr())
tr("is_contiguous t", lambda: torch.ones(2, 3).t().is_contiguous())
tr("is_contiguous cl",
   lambda: torch.ones(1, 2, 3, 4).to(memory_format=torch.channels_last).is_contiguous(
       memory_format=torch.channels_last))
tr("dim_order", lambda: torch.ones(1, 2, 3, 4).to(memory_format=torch.channels_last).dim_order())
tr("names", lambda: x.names)
tr("layout", lambda: x.layout)
tr("is_sparse", lambda: x.is_sparse)
tr("is_quantized", lambda: x.is_quantized)
tr("is_meta", lambda: x.is_meta)
tr("is_pinned", lambda: x.is_pinned())
tr("share_memory", lambda: x.clone().share_memory_().is_shared())
tr("ndim T mT",
   lambda: (torch.ones(2, 3).T.shape, torch.ones(2, 3, 4).mT.shape, torch.ones(2, 3).H.shape))
tr("T 3d warn", lambda: torch.ones(2, 3, 4).T.shape)
tr("real imag", lambda: (torch.tensor([1+2j]).real, torch.tensor([1+2j]).imag))
tr("imag real tensor", lambda: x.imag)
tr("abs complex", lambda: torch.tensor([3+4j]).abs())
tr("angle", lambda: torch.tensor([-1.0, 1.0]).angle())
tr("view_as_real", lambda: torch.view_as_real(torch.tensor([1+2j])))
tr("view_as_complex bad", lambda: torch.view_as_complex(torch.ones(3)))
print(json.dumps(out))
'''


def test_types_and_defaults_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = sides.on_both(PROGRAM)
    byname = {rec[0]: rec for rec in theirs}
    assert byname["type(bad str)"][1] == "ValueError"
    assert byname["set_default_dtype bf16"][1] == "RuntimeError"
    assert ours == theirs, json.dumps([(o, t) for o, t in zip(ours, theirs) if o != t], indent=1)
