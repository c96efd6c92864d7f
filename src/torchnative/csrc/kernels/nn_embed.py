"""embedding (Embedding.cpp), the embedding_bag family (EmbeddingBag.cpp: embedding_bag, its
kernels and their backward kernels), native_dropout (Dropout.cpp), the CompositeImplicitAutograd
dropout family (dropout, feature_dropout, alpha_dropout, feature_alpha_dropout and their in-place
forms, as ``_dropout_impl`` writes them) and one_hot (Onehot.cpp).

Random draws come from the default CPU generator, bit for bit as upstream's (csrc/random).
"""

from __future__ import annotations

import math

import numpy as np

from ..core import dtypes as D
from .support.common import arr, as_compute, scalar, wrap
from ..dispatch.call import call
from ..random.fpmath import fma32
from .support.nn_util import python_key
from ..ops.kernel_registry import kernel

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


@kernel("embedding_renorm_")
def embedding_renorm_(self, indices, max_norm, norm_type):
    """Embedding.cpp's CPU loop: each distinct index in ascending order, its row's norm (the
    norm operator, read back as a double) and, above ``max_norm``, the row scaled in place by
    max_norm / (norm + 1e-7). The scale reaches the C++ ``row *= scale`` as a Scalar rounded to
    the row's dtype first (measured: a float16 row is scaled by the float16 value of the scale,
    where Python's ``row *= scale`` keeps it in float)."""
    if self.dim() != 2:
        raise RuntimeError(f"Expected {2}-dimensional tensor, but got {self.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "embedding_renorm_)")
    if indices._dtype not in _INDEX:
        raise RuntimeError("Expected tensor for argument #2 'indices' to have one of the following "
                           f"scalar types: Long, Int; but got {tensor_type_name(indices)} instead "
                           "(while checking arguments for embedding_renorm_)")
    for i in np.unique(arr(indices).reshape(-1)):
        row = call("select.int", self, 0, int(i))
        norm = float(call("norm.Scalar", row, norm_type).item())
        if norm > max_norm:
            call("mul_.Tensor", row, scalar(max_norm / (norm + 1e-7), self._dtype))
    return self


@kernel("embedding_backward", composite=True)
def embedding_backward(grad, indices, num_weights, padding_idx, scale_grad_by_freq, sparse):
    if sparse:
        return call("embedding_sparse_backward", grad, indices, num_weights, padding_idx,
                    scale_grad_by_freq)
    return call("embedding_dense_backward", grad, indices, num_weights, padding_idx,
                scale_grad_by_freq)


# ---- dropout ----------------------------------------------------------------------------------

def _generator_state():
    from ..core.generator import default_generator

    return default_generator._state


def _memory_order(t) -> tuple:
    """The dimension order empty_like(t) lays out (and TensorIterator walks) in memory."""
    if t.dim() < 2 or t.is_contiguous() or not t._non_overlapping_and_dense():
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


# ---- embedding_bag (EmbeddingBag.cpp) ----------------------------------------------------------
#
# _embedding_bag returns (output, offset2bag, bag_size, max_indices) with upstream's contents:
# offset2bag maps each index to its bag (left empty on the 'sum' fast path, which needs none:
# float/half/bfloat16 weights with unit column stride, no padding_idx); bag_size counts the
# non-padding indices of each bag (zeros for 'sum'; one entry per offset in the forward-only
# 'sum' case); max_indices holds, for 'max', the row that gave each output element, and for the
# other modes a copy of bag_size. Bags are reduced in index order, in float32 for
# float16/bfloat16 weights (rounded once), in the weight's dtype otherwise.

_SUM, _MEAN, _MAX = 0, 1, 2
_WEIGHT_TYPES = ("Half", "BFloat16", "Float", "Double")
_FAST = frozenset((_B["float32"], _B["float16"], _B["bfloat16"]))


def _check_types(t, argname, names, fn="embedding_bag"):
    allowed = {"Long": _B["int64"], "Int": _B["int32"], "Half": _B["float16"],
               "BFloat16": _B["bfloat16"], "Float": _B["float32"], "Double": _B["float64"]}
    if t._dtype not in tuple(allowed[n] for n in names):
        raise RuntimeError(f"Expected tensor for argument #1 '{argname}' to have one of the "
                           f"following scalar types: {', '.join(names)}; but got "
                           f"{tensor_type_name(t)} instead (while checking arguments for {fn})")


def _check_same_type(a, aname, b, bname):
    if a._dtype is not b._dtype:
        raise RuntimeError(f"Expected tensor for argument #1 '{aname}' to have the same type as "
                           f"tensor for argument #1 '{bname}'; but type {tensor_type_name(a)} does not "
                           f"equal {tensor_type_name(b)} (while checking arguments for embedding_bag)")


def _check_contiguous(t, argname):
    if not t.is_contiguous():
        raise RuntimeError(f"Expected contiguous tensor, but got non-contiguous tensor for "
                           f"argument #1 '{argname}' (while checking arguments for "
                           "embedding_bag)")


def _promote_indices(indices, offsets):
    from ..core.promotion import promote_types

    common = promote_types(offsets._dtype, indices._dtype)
    if indices._dtype is not common:
        indices = call("_to_copy", indices, dtype=common)
    if offsets._dtype is not common:
        offsets = call("_to_copy", offsets, dtype=common)
    return indices, offsets


def _torch_check(cond: str):
    return RuntimeError(f"Expected {cond} to be true, but got false.  (Could this error message "
                        "be improved?  If so, please report an enhancement request to PyTorch.)")


def _scalar_str(v, t) -> str:
    """How ``<< tensor[0]`` prints a 0-dim tensor in a C++ message."""
    return f"{v}\n[ {tensor_type_name(t)}{{}} ]"


def _check_arguments(weight, indices, offsets, mode, psw, include_last_offset):
    _check_types(indices, "indices", ("Long", "Int"))
    _check_types(offsets, "offsets", ("Long", "Int"))
    _check_same_type(indices, "indices", offsets, "offsets")
    _check_types(weight, "weight", _WEIGHT_TYPES)
    offs = arr(offsets).reshape(-1)
    if offsets._size[0] > 0:
        if offs[0] != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the "
                               "mini-batch has to start from position 0. However, got "
                               f"{_scalar_str(int(offs[0]), offsets)}")
        if offs[-1] > indices._size[0]:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                               f"{indices._size[0]} but got offsets[-1] of {int(offs[-1])}")
    if psw is not None:
        if mode != _SUM:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with "
                               "mode='sum'")
        _check_same_type(weight, "weight", psw, "per_sample_weights")
        if psw.dim() != 1:
            raise _torch_check("per_sample_weights.value().dim() == 1")
        if psw.numel() != indices.numel():
            raise _torch_check("per_sample_weights.value().numel() == indices.numel()")
    if include_last_offset and offsets._size[0] < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")


def _offset2bag(offs: np.ndarray, n: int) -> np.ndarray:
    """index_add_ a one at each offset, minus one at 0, cumulative sum: each index's bag."""
    o2b = np.zeros(n + 1, offs.dtype)
    np.add.at(o2b, offs, 1)
    o2b[0] -= 1
    return np.cumsum(o2b, dtype=offs.dtype)[:n]


def _check_index(idx, vocab):
    bad = (idx < 0) | (idx >= vocab)
    if bad.any():
        raise RuntimeError("embedding_bag: Expected idx >= 0 && idx < num_embeddings but found "
                           f"idx to be {int(idx[np.argmax(bad)])}")


def _check_index_fast(idx, vocab):
    """fbgemm's report for the fast path: the first bad index in bag order."""
    bad = (idx < 0) | (idx >= vocab)
    if bad.any():
        i = int(np.argmax(bad))
        raise RuntimeError(f"Index {i} of input takes value {int(idx[i])} which is not in the "
                           f"valid range [0, {vocab})")


def _embedding_bag_impl(weight, indices, offsets, mode, psw, include_last_offset, padding_idx,
                        requires_grad):
    if indices.dim() not in (1, 2):
        raise RuntimeError("input has to be a 1D or 2D Tensor, but got Tensor of dimension "
                           f"{indices.dim()}")
    if indices.dim() == 1 and offsets.dim() != 1:
        raise RuntimeError("offsets has to be a 1D Tensor, but got Tensor of dimension "
                           f"{offsets.dim()}")
    indices, offsets = _promote_indices(indices, offsets)
    _check_arguments(weight, indices, offsets, mode, psw, include_last_offset)
    idt = offsets._dtype
    inp = np.dtype(D.numpy_dtype(idt))
    n_off = offsets._size[0]
    num_bags = n_off - 1 if include_last_offset else n_off
    ddim = weight._size[1]
    vocab = weight._size[0]
    idx = arr(indices).reshape(-1)
    n = indices._size[0]
    offs = arr(offsets).reshape(-1)
    wdt = weight._dtype
    w = as_compute(weight, wdt)
    fast = wdt in _FAST and weight._stride[1] == 1 and padding_idx < 0 and \
        (psw is None or psw._stride[0] == 1)
    o2b_needed = mode in (_MEAN, _MAX) or not fast
    bag_offs = offs[:num_bags] if include_last_offset else offs
    o2b = _offset2bag(bag_offs, n) if o2b_needed else np.zeros(0, inp)
    # bag sizes from the offsets (the last bag runs to the end of the indices)
    if requires_grad or mode in (_MEAN, _MAX):
        bag_size = np.zeros(num_bags, inp)
        if num_bags != 1 and num_bags > 0:
            bag_size[:-1] = offs[1:num_bags] - offs[: num_bags - 1]
        if num_bags > 0:
            bag_size[-1] = n - offs[num_bags - 1]
    else:
        bag_size = np.zeros(n_off, inp)
    pad = idx == padding_idx if padding_idx >= 0 else np.zeros(idx.shape, bool)
    bag_of = o2b if o2b_needed else _offset2bag(bag_offs, n)
    out = np.zeros((num_bags, ddim), w.dtype)
    if mode == _MAX:
        _check_index(idx, vocab)
        max_idx = np.zeros((num_bags, ddim), inp)
        seen = np.zeros(num_bags, bool)
        for k in range(n):
            b = bag_of[k]
            if pad[k]:
                bag_size[b] -= 1
                continue
            row = w[idx[k]]
            if not seen[b]:
                out[b] = row
                max_idx[b] = idx[k]
                seen[b] = True
            else:
                better = row > out[b]
                out[b] = np.where(better, row, out[b])
                max_idx[b] = np.where(better, idx[k], max_idx[b])
        return _bag_results(out, wdt, o2b, bag_size, max_idx, idt)
    if fast:
        _check_index_fast(idx, vocab)
    else:
        _check_index(idx, vocab)
    keep = ~pad
    np.subtract.at(bag_size, bag_of[pad], 1)
    rows = w[idx[keep]]
    if psw is not None and fast:
        # fbgemm's EmbeddingSpMDM: each weighted row fused into the bag's float sum, in order
        scale = as_compute(psw, psw._dtype).reshape(-1)[keep].astype(np.float32)
        for b, k, row in zip(bag_of[keep].tolist(), scale.tolist(), rows):
            out[b] = np.asarray(fma32(np.float32(k), row, out[b])).reshape(row.shape)
    else:
        if psw is not None:
            scale = as_compute(psw, psw._dtype).reshape(-1)[keep]
            rows = rows * scale[:, None].astype(rows.dtype)
        np.add.at(out, bag_of[keep], rows)
    if wdt in D.REDUCED_FLOATING:
        out = _round_to(out, wdt)
    if mode == _MEAN:
        out = out / np.maximum(bag_size, 1).astype(out.dtype)[:, None]
    if mode == _SUM:
        bag_size[...] = 0
    return _bag_results(out, wdt, o2b, bag_size, bag_size.copy(), idt)


def _round_to(a, dt):
    from ..core.cast import cast_array

    f32 = _B["float32"]
    return cast_array(cast_array(a.astype(np.float32), f32, dt), dt, f32)


def _bag_results(out, wdt, o2b, bag_size, max_idx, idt):
    return (wrap(np.ascontiguousarray(out), wdt), wrap(o2b, idt), wrap(bag_size, idt),
            wrap(np.ascontiguousarray(max_idx), idt))


@kernel("_embedding_bag")
def _embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                   per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    return _embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights,
                               include_last_offset, padding_idx, True)


@kernel("_embedding_bag_forward_only")
def _embedding_bag_forward_only(weight, indices, offsets, scale_grad_by_freq=False, mode=0,
                                sparse=False, per_sample_weights=None, include_last_offset=False,
                                padding_idx=-1):
    return _embedding_bag_impl(weight, indices, offsets, mode, per_sample_weights,
                               include_last_offset, padding_idx, False)


@kernel("embedding_bag.padding_idx", composite=True)
def embedding_bag_padding_idx(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                              per_sample_weights, include_last_offset, padding_idx):
    pad = -1
    if padding_idx is not None:
        num = weight._size[0]
        pad = int(padding_idx)
        if not -num <= pad < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {pad}")
        if pad < 0:
            pad += num
    from .support.nn_util import contiguous

    name = "_embedding_bag" if weight.requires_grad else "_embedding_bag_forward_only"
    return call(name, weight, contiguous(indices), contiguous(offsets), scale_grad_by_freq, mode,
                sparse, per_sample_weights, include_last_offset, pad)


@kernel("embedding_bag", composite=True)
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False):
    return embedding_bag_padding_idx(weight, indices, offsets, scale_grad_by_freq, mode, sparse,
                                     per_sample_weights, include_last_offset, None)


@kernel("_embedding_bag_backward")
def _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, maximum_indices,
                            num_weights, scale_grad_by_freq, mode, sparse, per_sample_weights,
                            padding_idx=-1):
    indices, offsets = _promote_indices(indices, offsets)
    _check_types(indices, "indices", ("Long", "Int"))
    _check_contiguous(indices, "indices")
    _check_types(offsets, "offsets", ("Long", "Int"))
    _check_same_type(indices, "indices", offsets, "offsets")
    _check_contiguous(offsets, "offsets")
    if indices.numel() != 0 and offset2bag.numel() == 0:
        o2b = wrap(_offset2bag(arr(offsets).reshape(-1), indices._size[0]), offsets._dtype)
    else:
        _check_types(offset2bag, "offset2bag", ("Long", "Int"))
        _check_contiguous(offset2bag, "offset2bag")
        o2b = offset2bag
    if sparse:
        return call("_embedding_bag_sparse_backward", grad, indices, offsets, o2b, bag_size,
                    num_weights, scale_grad_by_freq, mode, per_sample_weights, padding_idx)
    return call("_embedding_bag_dense_backward", grad, indices, o2b, bag_size, maximum_indices,
                num_weights, scale_grad_by_freq, mode, per_sample_weights, padding_idx)


@kernel("_embedding_bag_dense_backward")
def _embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices,
                                  num_weights, scale_grad_by_freq, mode, per_sample_weights,
                                  padding_idx=-1):
    _check_types(grad, "grad_", _WEIGHT_TYPES)
    gdt = grad._dtype
    g = as_compute(grad, gdt)
    g = g.astype(np.float64) if g.dtype == np.float32 else g
    ddim = grad._size[1]
    out = np.zeros((int(num_weights), ddim), g.dtype)
    if mode == _MAX:
        sizes = arr(bag_size).reshape(-1)
        nonempty = np.nonzero(sizes)[0]
        mi = arr(maximum_indices)[nonempty]
        gg = g[nonempty]
        cols = np.broadcast_to(np.arange(ddim), mi.shape)
        np.add.at(out, (mi, cols), gg)
        return wrap(out, gdt)
    idx = arr(indices).reshape(-1)
    o2b = arr(offset2bag).reshape(-1)
    order = np.argsort(idx, kind="stable")
    counts = np.bincount(idx, minlength=int(num_weights)) if idx.size else \
        np.zeros(int(num_weights), np.int64)
    scale = np.ones(idx.size)
    if per_sample_weights is not None:
        scale = scale * as_compute(per_sample_weights, per_sample_weights._dtype).reshape(-1)
    if scale_grad_by_freq:
        # upstream divides the k-th group of equal (sorted) indices by the count of the k-th
        # sorted index, not of the group's own index
        srt = idx[order]
        group = np.cumsum(np.r_[True, srt[1:] != srt[:-1]]) - 1 if srt.size else \
            np.zeros(0, np.int64)
        div = np.empty(idx.size)
        div[order] = counts[srt[group]]
        scale = scale / div
    if mode == _MEAN:
        bs = arr(bag_size).reshape(-1)[o2b]
        scale = np.where(bs != 0, scale / np.where(bs != 0, bs, 1), scale)
    keep = idx != padding_idx
    sel = order[keep[order]]
    np.add.at(out, idx[sel], g[o2b[sel]] * scale[sel][:, None].astype(g.dtype))
    return wrap(out, gdt)


@kernel("_embedding_bag_per_sample_weights_backward")
def _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode,
                                               padding_idx=-1):
    if mode != _SUM:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for "
                           "mode='sum'")
    gdt = grad._dtype
    if gdt not in (_B["float32"], _B["float64"], _B["float16"], _B["bfloat16"]):
        from .support.nn_util import not_implemented

        raise not_implemented("_embedding_bag_per_sample_weights_backward_cpu", gdt)
    indices, offsets = _promote_indices(indices, offsets)
    _check_types(indices, "indices", ("Long", "Int"))
    _check_contiguous(indices, "indices")
    n = indices._size[0]
    if indices.numel() != 0 and offset2bag.numel() == 0:
        o2b = _offset2bag(arr(offsets).reshape(-1), n)
    else:
        _check_types(offset2bag, "offset2bag", ("Long", "Int"))
        _check_contiguous(offset2bag, "offset2bag")
        o2b = arr(offset2bag).reshape(-1)
    idx = arr(indices).reshape(-1)
    g = as_compute(grad, gdt).astype(np.float64)
    w = as_compute(weight, weight._dtype).astype(np.float64)
    out = np.zeros(n)
    keep = idx != padding_idx
    out[keep] = np.einsum("ij,ij->i", g[o2b[keep]], w[idx[keep]])
    return wrap(out, gdt)


def _register_outs():
    from .support.out import register_autogen_out

    outs4 = ("out0", "out1", "out2", "out3")
    register_autogen_out("_embedding_bag.out", _embedding_bag, outs4)
    register_autogen_out("_embedding_bag_forward_only.out", _embedding_bag_forward_only, outs4)
    register_autogen_out("_embedding_bag_dense_backward.out", _embedding_bag_dense_backward)
    register_autogen_out("_embedding_bag_per_sample_weights_backward.out",
                         _embedding_bag_per_sample_weights_backward)


_register_outs()
