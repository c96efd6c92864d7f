"""Indexing kernels: index.Tensor, index_put_, index_select, gather, the scatter family,
index_add/copy/fill/reduce, masked_select/scatter, take, put_, nonzero.

Advanced indexing follows TensorAdvancedIndexing.cpp: masks become their nonzero coordinates
(expandTensors), index tensors broadcast together, and when the indexed dimensions are not
adjacent they move to the front (numpy's rule, so numpy's fancy indexing computes the values).
Output strides of ``index`` are what TensorIterator allocates (``ti_output_strides``). Messages,
exception types and the order of checks are upstream's. Accumulating writes run in upstream's
sequential order (``np.ufunc.at`` visits indices in order), so float sums round as upstream's do.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes as D
from ..construct import empty
from ..tensor import TensorBase, contiguous_strides, wrap_dim
from ..cast import cast_array
from .common import INT64, arr, opmath, wrap
from .registry import kernel

_INDEX_DTYPES = ("int64", "int32")
# c10::Scalar::to<T>() names T like this in its overflow message
_CTYPE = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
          "int64": "int64_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
          "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
          "float64": "double", "bool": "bool", "complex64": "c10::complex<float>",
          "complex128": "c10::complex<double>"}


def _name(dt) -> str:
    return dt._cpp_name


def _shape_str(shape) -> str:
    return str(list(shape))


def scalar_to(value, dt):
    """c10::Scalar::to<scalar_t>(): ``value`` as a numpy scalar of ``dt``'s storage, refusing
    values that overflow the type (c10::overflows), as upstream does."""
    if isinstance(value, TensorBase):
        value = value.item()
    if isinstance(value, (bool, np.bool_)):
        src, value = D.BY_NAME["bool"], bool(value)
    elif isinstance(value, (int, np.integer)):
        src, value = INT64, int(value)
    elif isinstance(value, (float, np.floating)):
        src, value = D.BY_NAME["float64"], float(value)
    else:
        src, value = D.BY_NAME["complex128"], complex(value)
    name = dt._name
    if name != "bool" and src._name != "bool" and _overflows(value, dt):
        raise RuntimeError(f"value cannot be converted to type {_CTYPE.get(name, name)} without "
                           "overflow")
    return cast_array(np.asarray(value, D.numpy_dtype(src)), src, dt)[()]


def _overflows(value, dt) -> bool:
    if isinstance(value, complex):
        if not dt.is_complex and value.imag != 0:
            return True
        value = value.real
    if dt.is_complex:
        dt = dt.to_real()
    if dt.is_floating_point:
        fi = np.finfo(D.numpy_dtype(dt)) if dt._name != "bfloat16" else None
        hi = float(fi.max) if fi is not None else 3.3895313892515355e38
        if isinstance(value, float) and (value != value or value in (float("inf"), -float("inf"))):
            return False
        return value < -hi or value > hi
    info = np.iinfo(D.numpy_dtype(dt))
    if isinstance(value, float):
        return value != value or value < float(info.min) or value > float(info.max)
    if info.min == 0:  # unsigned: negative values wrap (two's complement), as upstream allows
        return value > info.max or (value < 0 and -value > info.max)
    return value < info.min or value > info.max


# ------------------------------------------------------------------------------ TensorIterator
def ti_perm(shape, operands) -> list:
    """TensorIterator's dimension order (reorder_dimensions): perm[0] is the fastest dim.
    ``operands`` are the defined inputs' strides, already broadcast to ``shape`` (0 where an
    operand is broadcast); an output being allocated takes no part."""
    n = len(shape)
    perm = list(range(n - 1, -1, -1))

    def should_swap(d0, d1):
        for st in operands:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def ti_output_strides(shape, operands, same_shape: bool = False) -> tuple:
    """Strides TensorIterator gives an output it allocates for inputs with these strides."""
    shape = tuple(shape)
    n = len(shape)
    if n <= 1:
        return contiguous_strides(shape)
    if same_shape and operands:
        # fast_set_up: all inputs contiguous, or all dense with one set of strides
        if all(_contig(shape, st) for st in operands):
            return contiguous_strides(shape)
        if all(_dense(shape, st) for st in operands) and \
                all(tuple(st) == tuple(operands[-1]) for st in operands):
            return tuple(operands[-1])
    perm = ti_perm(shape, operands)
    if perm == list(range(n - 1, -1, -1)):
        return contiguous_strides(shape)
    strides = [0] * n
    nxt = 1
    for d in perm:
        strides[d] = nxt
        nxt *= shape[d]
    return tuple(strides)


def _contig(shape, strides) -> bool:
    expected = 1
    for sz, st in zip(reversed(shape), reversed(strides)):
        if sz != 1:
            if st != expected:
                return False
            expected *= sz
    return True


def _dense(shape, strides) -> bool:
    expected = 1
    for st, sz in sorted((st, sz) for sz, st in zip(shape, strides) if sz != 1):
        if st != expected:
            return False
        expected *= sz
    return True


def _bcast_strides(t_shape, t_strides, shape) -> tuple:
    """An operand's strides once broadcast (right-aligned) to ``shape``."""
    lead = len(shape) - len(t_shape)
    out = [0] * lead
    for sz, st, full in zip(t_shape, t_strides, shape[lead:]):
        out.append(0 if sz == 1 and full != 1 else st)
    return tuple(out)


def new_with_strides(result: np.ndarray, dt, strides) -> TensorBase:
    """A tensor of dtype ``dt`` holding ``result`` laid out with ``strides``."""
    if tuple(strides) == contiguous_strides(result.shape):
        return wrap(np.ascontiguousarray(result), dt)
    out = empty(result.shape, dt, stride=strides)
    np.copyto(out._np, result)
    return out


# ----------------------------------------------------------------------------------- overlaps
def _has_internal_overlap(t: TensorBase) -> bool:
    return any(st == 0 and sz > 1 for sz, st in zip(t._size, t._stride))


def assert_no_internal_overlap(t: TensorBase) -> None:
    if _has_internal_overlap(t):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor "
                           "refers to a single memory location. Please clone() the tensor before "
                           "performing the operation.")


def assert_no_overlap(a: TensorBase, b: TensorBase) -> None:
    """at::assert_no_overlap: dense tensors on one storage whose byte ranges meet."""
    if a is None or b is None or a._storage is not b._storage:
        return
    if not (a.is_non_overlapping_and_dense() and b.is_non_overlapping_and_dense()):
        return
    if a.numel() == 0 or b.numel() == 0:
        return
    a0, b0 = a._offset, b._offset
    a1, b1 = a0 + a.numel(), b0 + b.numel()
    if a0 < b1 and b0 < a1:
        raise RuntimeError("unsupported operation: some elements of the input tensor and the "
                           "written-to tensor refer to a single memory location. Please clone() "
                           "the tensor before performing the operation.")


# ----------------------------------------------------------------------------- advanced index
class _Advanced:
    """make_info: expanded, broadcast indices of ``self`` and the shape of the result."""

    __slots__ = ("key", "shape", "indexers", "dims", "bshape", "src_strides", "index_strides")

    def __init__(self, self_, indices):
        ndim = self_.dim()
        if len(indices) > ndim:
            raise IndexError(f"too many indices for tensor of dimension {ndim} "
                             f"(got {len(indices)})")
        for idx in indices:  # checkIndexTensorTypes comes before any mask is expanded
            if idx is not None and idx._dtype._name not in _INDEX_DTYPES + ("bool", "uint8"):
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
        expanded: list = []  # per dim of self: numpy index array or None
        tensors: list = []   # (array, tensor-or-None) per defined index, for strides
        for idx in indices:
            if idx is None:
                expanded.append(None)
                continue
            a = arr(idx)
            if idx._dtype._name in ("bool", "uint8"):
                if idx._dtype._name == "uint8":
                    warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use "
                                  "a dtype torch.bool instead.", UserWarning, stacklevel=3)
                for j in range(a.ndim):
                    src = len(expanded) + j
                    if a.shape[j] != self_.size(src):
                        raise IndexError(
                            f"The shape of the mask {_shape_str(a.shape)} at index {j} does not "
                            f"match the shape of the indexed tensor {_shape_str(self_._size)} at "
                            f"index {src}")
                if a.ndim:
                    coords = np.nonzero(a)
                    expanded.extend(coords)
                    tensors.extend((c, None) for c in coords)
            else:
                expanded.append(a)
                tensors.append((a, idx))
        defined = [a for a in expanded if a is not None]
        if not defined:
            if not indices:
                raise IndexError("at least one index must be provided")
            raise RuntimeError("ntensor >= 3 INTERNAL ASSERT FAILED: index got no index tensor "
                               "(only None entries or empty masks)")
        try:
            bshape = np.broadcast_shapes(*(a.shape for a in defined))
        except ValueError:
            raise IndexError("shape mismatch: indexing tensors could not be broadcast together "
                             "with shapes " + ", ".join(_shape_str(a.shape) for a in defined)) \
                from None
        expanded += [None] * (ndim - len(expanded))
        dims = [d for d, a in enumerate(expanded) if a is not None]
        size = self_._size
        if any(size[d] == 0 for d in dims) and 0 not in bshape:
            raise IndexError("index is out of bounds for dimension with size 0")
        stride = self_._stride
        if dims[-1] - dims[0] + 1 == len(dims):
            before, after = range(dims[0]), range(dims[-1] + 1, ndim)
            shape = tuple(size[d] for d in before) + bshape + tuple(size[d] for d in after)
            src = tuple(stride[d] for d in before) + (0,) * len(bshape) + \
                tuple(stride[d] for d in after)
            n_before, n_after = len(before), len(after)
        else:  # transposeToFront: the indexed dims lead
            rest = [d for d in range(ndim) if expanded[d] is None]
            shape = bshape + tuple(size[d] for d in rest)
            src = (0,) * len(bshape) + tuple(stride[d] for d in rest)
            n_before, n_after = 0, len(rest)
        self.key = tuple(slice(None) if a is None else a for a in expanded)
        self.shape = shape
        self.bshape = bshape
        self.dims = dims
        self.indexers = defined
        self.src_strides = src
        # each index as reshape_indexer leaves it: 1s around its (broadcast) dims
        self.index_strides = []
        for a, t in tensors:
            st = t._stride if t is not None else (1,) * a.ndim
            bst = _bcast_strides(a.shape, st, bshape)
            self.index_strides.append((0,) * n_before + bst + (0,) * n_after)

    def check_bounds(self, self_) -> None:
        """The CPU kernel's bounds check: the first bad element (in order), its indexer's
        position among the index tensors as 'dimension'."""
        bad_any = False
        for d, a in zip(self.dims, self.indexers):
            n = self_._size[d]
            if a.size and (a.min() < -n or a.max() >= n):
                bad_any = True
                break
        if not bad_any:
            return
        flags = [np.broadcast_to((a < -self_._size[d]) | (a >= self_._size[d]), self.bshape)
                 for d, a in zip(self.dims, self.indexers)]
        first = min(int(np.argmax(f.reshape(-1))) if f.any() else f.size for f in flags)
        for j, (d, a, f) in enumerate(zip(self.dims, self.indexers, flags)):
            if f.reshape(-1)[first]:
                value = int(np.broadcast_to(a, self.bshape).reshape(-1)[first])
                raise IndexError(f"index {value} is out of bounds for dimension {j} with size "
                                 f"{self_._size[d]}")

    def out_strides(self) -> tuple:
        return ti_output_strides(self.shape, [self.src_strides] + self.index_strides)


@kernel("index.Tensor")
def index(self, indices):
    info = _Advanced(self, list(indices))
    info.check_bounds(self)
    result = arr(self)[info.key]
    if all(a.ndim == 0 for a in info.indexers):
        result = result.copy()  # numpy treats 0-dim integer arrays as basic indices (a view)
    return new_with_strides(result, self._dtype, info.out_strides())


def _masked_fill_dispatch(self, indices, values):
    """canDispatchToMaskedFill: a one-element value and one mask (others None) fill in place."""
    if values.numel() != 1:
        return None
    mask, n = None, 0
    for idx in indices:
        if idx is None:
            n += 1
            continue
        if idx._dtype._name not in ("bool", "uint8") or mask is not None:
            return None
        mask = idx
        for j in range(idx.dim()):
            if idx._size[j] != self.size(n + j):
                raise IndexError(f"The shape of the mask {_shape_str(idx._size)} at index {j} "
                                 f"does not match the shape of the indexed tensor "
                                 f"{_shape_str(self._size)} at index {n + j}")
        n += idx.dim()
    if mask is None:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           "nullptr (uninitialized)")
    if mask._dtype._name != "bool":
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           "unsigned char")
    m = arr(mask).reshape(mask._size + (1,) * (self.dim() - n))
    return m


@kernel("_index_put_impl_")
def _index_put_impl_(self, indices, values, accumulate=False, unsafe=False):
    indices = list(indices)
    if len(indices) > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} "
                         f"(got {len(indices)})")
    if _has_internal_overlap(self):
        warnings.warn("Use of index_put_ on expanded tensors is deprecated. Please clone() the "
                      "tensor before performing this operation. This also applies to advanced "
                      "indexing e.g. tensor[indices] = tensor", UserWarning, stacklevel=3)
    if not accumulate:
        mask = _masked_fill_dispatch(self, indices, values)
        if mask is not None:
            a = arr(self)
            value = scalar_to(values.item(), self._dtype)
            np.copyto(a, value, where=np.broadcast_to(mask, a.shape))
            return self
    assert_no_overlap(self, values)
    for idx in indices:
        assert_no_overlap(self, idx)
    info = _Advanced(self, indices)
    vshape = values._size
    if len(vshape) > len(info.shape) or any(
            v != 1 and v != s for v, s in zip(reversed(vshape), reversed(info.shape))):
        raise RuntimeError(f"shape mismatch: value tensor of shape {_shape_str(vshape)} cannot "
                           f"be broadcast to indexing result of shape {_shape_str(info.shape)}")
    if values._dtype != self._dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_name(self._dtype)} for the destination and "
                           f"{_name(values._dtype)} for the source.")
    info.check_bounds(self)
    a, v = arr(self), arr(values)
    if accumulate:
        np.add.at(a, info.key, np.broadcast_to(v, info.shape))
    else:
        a[info.key] = v
    return self


@kernel("index_put_")
def index_put_(self, indices, values, accumulate=False):
    return _index_put_impl_(self, indices, values, accumulate, False)


@kernel("index_put")
def index_put(self, indices, values, accumulate=False):
    from .copy import _clone

    return _index_put_impl_(_clone(self, None), indices, values, accumulate, False)
