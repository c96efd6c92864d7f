"""embedding (Embedding.cpp), native_dropout (Dropout.cpp), the CompositeImplicitAutograd
dropout family (dropout, feature_dropout, alpha_dropout, feature_alpha_dropout and their in-place
forms, as ``_dropout_impl`` writes them) and one_hot (Onehot.cpp).

Random draws come from the default CPU generator, bit for bit as upstream's (csrc/random).
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as D
from .common import arr, wrap
from .nn_util import call, python_key
from .registry import kernel

_B = D.BY_NAME
_INDEX = (_B["int64"], _B["int32"])
# at::Tensor::toString names that torch's error translation turns into legacy Python names
_LEGACY = {"uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
           "float16": "Half", "float32": "Float", "float64": "Double"}


def tensor_type_name(t) -> str:
    name = _LEGACY.get(t._dtype._name)
    return f"torch.{name}Tensor" if name else f"CPU{t._dtype._cpp_name}Type"


@kernel("embedding")
def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    if indices._dtype not in _INDEX:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following "
                           f"scalar types: Long, Int; but got {tensor_type_name(indices)} instead "
                           "(while checking arguments for embedding)")
    idx = arr(indices).reshape(-1)
    n = weight._size[0]
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")
    rows = np.take(arr(weight), idx, axis=0)
    return wrap(rows.reshape(tuple(indices._size) + (weight._size[1],)), weight._dtype)


@kernel("embedding_backward", composite=True)
def embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse):
    if sparse:
        return call("embedding_sparse_backward", grad, indices, num_weights, padding_idx,
                    scale_grad_by_freq)
    return call("embedding_dense_backward", grad, indices, num_weights, padding_idx,
                scale_grad_by_freq)


# ---- dropout ----------------------------------------------------------------------------------

def _generator_state():
    from ..generator import default_generator

    return default_generator.engine


def _memory_order(t) -> tuple:
    """The dimension order empty_like(t) lays out (and TensorIterator walks) in memory."""
    if t.dim() < 2 or t.is_contiguous() or not t.is_non_overlapping_and_dense():
        return tuple(range(t.dim()))
    return tuple(sorted(range(t.dim()), key=lambda d: (-t._stride[d], -d)))


@kernel("native_dropout")
def native_dropout(input, p, train):
    if input.numel() == 0:  # upstream returns the input itself and an empty mask of its dtype
        from .copy import _empty_like

        return input, _empty_like(input, input._dtype, input.device, None)
    training = train is None or train
    if training and not 0 <= 1.0 - p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={_fmt(1.0 - p)}")
    from ..random import native_dropout as sample

    # the mask is drawn in the memory order of empty_like(input)
    order = _memory_order(input)
    inverse = tuple(np.argsort(order))
    out, mask = sample(_generator_state(), arr(input).transpose(order), p, training)
    return (wrap(np.ascontiguousarray(out).transpose(inverse), input._dtype),
            wrap(np.ascontiguousarray(mask).transpose(inverse), _B["bool"]))


def _fmt(x: float) -> str:
    """A double as C++'s ostream prints it (6 significant digits)."""
    return f"{x:.6g}"


def _dropout_impl(input, p, train, feature, alpha, inplace):
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {_fmt(p)}")
    if p == 0 or not train or input.numel() == 0:
        return input
    mul = "mul_.Tensor" if inplace else "mul.Tensor"
    if p == 1:
        return call(mul, input, call("zeros", [], dtype=input._dtype, layout=None,
                                     device=input.device, pin_memory=None))
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        sizes = [input._size[0], input._size[1]] + [1] * (input.dim() - 2)
        noise = call("new_empty", input, sizes, dtype=None, layout=None, device=None,
                     pin_memory=None)
    else:
        noise = call("empty_like", input, dtype=None, layout=None, device=None, pin_memory=None,
                     memory_format=None)
    call("bernoulli_.float", noise, 1 - p, generator=None)
    if alpha:
        a_const = 1.7580993408473766
        a = 1.0 / math.sqrt((a_const * a_const * p + 1) * (1 - p))
        b = call("add_.Scalar", call("mul_.Scalar", call("add.Scalar", noise, -1), a_const * a),
                 a_const * a * p)
        call("mul_.Scalar", noise, a)
        return call("add_.Tensor", call(mul, input, noise), b)
    call("div_.Scalar", noise, 1 - p)
    return call(mul, input, noise)


def _register_dropout(name, feature, alpha):
    kernel(name, composite=True)(
        lambda input, p, train: _dropout_impl(input, p, train, feature, alpha, False))
    kernel(name + "_", composite=True)(
        lambda self, p, train: _dropout_impl(self, p, train, feature, alpha, True))


for _name, _feature, _alpha in (("dropout", False, False), ("feature_dropout", True, False),
                                ("alpha_dropout", False, True),
                                ("feature_alpha_dropout", True, True)):
    _register_dropout(_name, _feature, _alpha)


# ---- one_hot ----------------------------------------------------------------------------------

@kernel("one_hot", composite=True)
def one_hot(self, num_classes=-1):
    if self._dtype is not _B["int64"]:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if self._np is None or python_key(self):
        # meta tensors and tensor subclasses get the functional form
        if num_classes == -1:
            num_classes = call("max", self).item() + 1
        index = call("arange", num_classes, dtype=self._dtype, layout=None, device=self.device,
                     pin_memory=None)
        return call("_to_copy", call("eq.Tensor", call("unsqueeze", self, -1), index),
                    dtype=_B["int64"])
    shape = list(self._size)
    if self.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return call("empty.memory_format", shape + [num_classes], dtype=self._dtype,
                    layout=None, device=self.device, pin_memory=None, memory_format=None)
    lo, hi = call("aminmax", self, dim=None, keepdim=False)
    if call("_local_scalar_dense", lo) < 0:
        raise RuntimeError("Class values must be non-negative.")
    top = call("_local_scalar_dense", hi)
    if num_classes == -1:
        num_classes = top + 1
    elif num_classes <= top:
        raise RuntimeError("Class values must be smaller than num_classes.")
    ret = call("zeros", shape + [num_classes], dtype=self._dtype, layout=None,
               device=self.device, pin_memory=None)
    call("scatter_.value", ret, -1, call("unsqueeze", self, -1), 1)
    return ret
