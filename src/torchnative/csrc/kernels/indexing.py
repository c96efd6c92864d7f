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

import numpy as np

from ..platform.cpp_names import typemeta
from ..core import dtypes as D
from ..core.construct import empty
from ..core.mem_overlap import (YES, assert_no_internal_overlap, assert_no_overlap,
                                assert_no_partial_overlap, internal_overlap)
from ..core.tensor import TensorBase, contiguous_strides, wrap_dim
from .support.common import INT64, arr, opmath, wrap
from .pointwise_math import fma
from .pointwise_compare import warn_if_expanded
from .support.scalar import scalar_to
from .support.broadcast import infer_size
from ..ops.kernel_registry import kernel
from ..platform.torch_warn import torch_warn, torch_warn_once

_INDEX_DTYPES = ("int64", "int32")


def _name(dt) -> str:
    return dt._cpp_name


def _shape_str(shape) -> str:
    return str(list(shape))


# ------------------------------------------------------------------------------ TensorIterator
from .support.iteration import ti_perm  # noqa: E402  (re-exported: other kernels import it from here)


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
    result = np.asarray(result)
    if tuple(strides) == contiguous_strides(result.shape):
        return wrap(result if result.flags.c_contiguous else np.array(result, order="C"), dt)
    out = empty(result.shape, dt, stride=strides)
    np.copyto(out._np, result)
    return out


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
                    torch_warn("indexing with dtype torch.uint8 is now deprecated, please use "
                               "a dtype torch.bool instead.")
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


def _single_index(self, indices, writing=False):
    """(dim, index array) when one contiguous int64/int32 tensor indexes ``self`` (contiguous,
    unless ``writing``) in bounds and the other entries are None: reading is then ``np.take``
    along that dim, laid out contiguously (TensorIterator's order for such operands). None
    otherwise."""
    if len(indices) > len(self._size) or not (writing or self.is_contiguous()):
        return None
    found = None
    for d, idx in enumerate(indices):
        if idx is None:
            continue
        if found is not None or idx._dtype._name not in _INDEX_DTYPES or not idx._size or \
                not idx.is_contiguous():
            return None
        found = d
    if found is None:
        return None
    a = arr(indices[found])
    n = self._size[found]
    if n == 0 or a.size == 0 or a.min() < -n or a.max() >= n:
        return None  # the general path raises upstream's errors
    return found, a


@kernel("index.Tensor")
def index(self, indices):
    single = _single_index(self, indices)
    if single is not None:
        return wrap(np.take(arr(self), single[1], axis=single[0]), self._dtype)
    info = _Advanced(self, list(indices))
    info.check_bounds(self)
    result = arr(self)[info.key]
    if all(a.ndim == 0 for a in info.indexers):
        result = np.array(result)  # numpy treats 0-dim integer arrays as basic indices (a view)
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
    single = _single_index(self, indices, writing=True)
    if single is not None and values._dtype == self._dtype and values._storage is not \
            self._storage and internal_overlap(self) != YES:
        d, idx = single
        shape = self._size[:d] + tuple(idx.shape) + self._size[d + 1:]
        if len(values._size) <= len(shape) and all(
                v == 1 or v == n for v, n in zip(reversed(values._size), reversed(shape))):
            key = (slice(None),) * d + (idx,)
            if accumulate:
                np.add.at(arr(self), key, np.broadcast_to(arr(values), shape))
            else:
                arr(self)[key] = arr(values)
            return self
    if len(indices) > self.dim():
        raise IndexError(f"too many indices for tensor of dimension {self.dim()} "
                         f"(got {len(indices)})")
    if internal_overlap(self) == YES:
        torch_warn("Use of index_put_ on expanded tensors is deprecated. Please clone() the "
                   "tensor before performing this operation. This also applies to advanced "
                   "indexing e.g. tensor[indices] = tensor")
    if not accumulate:
        mask = _masked_fill_dispatch(self, indices, values)
        if mask is not None:
            if self._dtype in D.FLOAT8:  # upstream's index_put_ becomes masked_fill_ here
                raise NotImplementedError(f"\"masked_fill\" not implemented for "
                                          f"'{self._dtype._cpp_name}'")
            warn_if_expanded(self)
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


# ------------------------------------------------------------------------ dim-wise indexing
def _nsize(t: TensorBase, d: int) -> int:
    """ensure_nonempty_size: a 0-dim tensor counts as one element along dim 0."""
    return 1 if not t._size else t.size(d)


def _as_1d(a: np.ndarray) -> np.ndarray:
    return a.reshape(1) if a.ndim == 0 else a


def _index_array(index: TensorBase) -> np.ndarray:
    return _as_1d(arr(index))


def _key_along(idx: np.ndarray, dim: int) -> tuple:
    """The fancy index that reads/writes ``t[i0, .., idx[i0, .., ik], .., ik]``."""
    n = idx.ndim
    key = []
    for d, s in enumerate(idx.shape):
        if d == dim:
            key.append(idx)
        else:
            shp = [1] * n
            shp[d] = s
            key.append(np.arange(s).reshape(shp))
    return tuple(key)


def _check_bounds(idx: np.ndarray, size: int, dim: int, lo=0) -> None:
    """The scatter/gather kernels' check (no negative indices)."""
    if idx.size and (idx.min() < lo or idx.max() >= size):
        bad = idx[(idx < lo) | (idx >= size)].reshape(-1)[0]
        raise RuntimeError(f"index {int(bad)} is out of bounds for dimension {dim} with size "
                           f"{size}")


def _occurrence_rank(idx: np.ndarray) -> np.ndarray:
    """For each position, how many earlier positions hold the same index: positions of one rank
    have distinct targets, so rank by rank a sequential update becomes vectorized."""
    order = np.argsort(idx, kind="stable")
    s = idx[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    run_start = np.repeat(starts, np.diff(np.r_[starts, s.size]))
    rank = np.empty(idx.size, np.int64)
    rank[order] = np.arange(s.size) - run_start
    return rank


def _reduced(dt) -> bool:
    return dt in D.REDUCED_FLOATING


def _ufunc_at(out: np.ndarray, key, values: np.ndarray, ufunc, dt) -> None:
    """Sequential ``out[key] op= values``; float16/bfloat16 accumulate in float and round once
    (upstream's scatter kernels keep an opmath buffer)."""
    if _reduced(dt):
        buf = out.astype(np.float32)
        ufunc.at(buf, key, values.astype(np.float32))
        out[key] = buf[key].astype(out.dtype)
    else:
        ufunc.at(out, key, values)


@kernel("index_select")
def index_select(self, dim, index):
    dim = wrap_dim(dim, self.dim())
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._dtype._name not in _INDEX_DTYPES:
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    idx = arr(index).reshape(-1)
    a = arr(self)
    if self.dim() == 0:
        if idx.size and (idx.min() < 0 or idx.max() >= 1):
            raise IndexError("index out of range in self")
        return wrap(a.copy() if idx.size else np.empty((), a.dtype), self._dtype) \
            if idx.size <= 1 else wrap(np.repeat(a.reshape(1), idx.size), self._dtype)
    size = self._size[dim]
    if idx.size and self.numel() and (idx.min() < 0 or idx.max() >= size):
        if self.dim() > 1 and dim == 1:  # the dim-1 fast path checks before copying anything
            bad = idx[(idx < 0) | (idx >= size)][0]
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(bad)} "
                               f"axis_dim={size}")
        raise IndexError("index out of range in self")
    return wrap(np.take(a, idx, axis=dim), self._dtype)


def _gather_shape_check(self, dim, index) -> None:
    nd = max(self.dim(), 1)
    if nd != max(index.dim(), 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    for d in range(nd):
        if d != dim and _nsize(index, d) > _nsize(self, d):
            raise RuntimeError(f"Size does not match at dimension {d} expected index "
                               f"{_shape_str(index._size)} to be no larger than self "
                               f"{_shape_str(self._size)} apart from dimension {dim}")


@kernel("gather")
def gather(self, dim, index, sparse_grad=False):
    dim = wrap_dim(dim, self.dim())
    if index.numel() == 0:
        return empty(index._size, self._dtype)
    if index._dtype._name not in _INDEX_DTYPES:
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    _gather_shape_check(self, dim, index)
    a, idx = _as_1d(arr(self)), _index_array(index)
    _check_bounds(idx, a.shape[dim], dim)
    return wrap(a[_key_along(idx, dim)].reshape(index._size), self._dtype)


# ------------------------------------------------------------------------------ scatter family


def _scatter_checks(self, dim, index, src=None, reduce=None, new_options=False) -> int:
    dim = wrap_dim(dim, self.dim())
    if index.numel() != 0 and index._dtype._name not in _INDEX_DTYPES:
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if src is not None and src._dtype != self._dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if index.numel() != 0:
        nd = max(self.dim(), 1)
        if nd != max(index.dim(), 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as self "
                               "tensor")
        if src is not None and max(src.dim(), 1) != max(index.dim(), 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
        wrong = any(d != dim and _nsize(index, d) > _nsize(self, d) for d in range(nd))
        if not wrong and src is not None:
            wrong = any(_nsize(index, d) > _nsize(src, d) for d in range(nd))
        if wrong:
            msg = (f"Expected index {_shape_str(index._size)} to be no larger than self "
                   f"{_shape_str(self._size)} apart from dimension {dim}")
            if src is not None:
                msg += f" and to be no larger size than src {_shape_str(src._size)}"
            raise RuntimeError(msg)
    if reduce is not None:
        allowed = ("sum", "prod", "mean", "amax", "amin") if new_options else ("add", "multiply")
        if reduce not in allowed:
            if new_options:
                raise RuntimeError("reduce argument must be either sum, prod, mean, amax or "
                                   f"amin, got {reduce}")
            raise RuntimeError("reduce argument must be either add or multiply.")
    return dim


def _scatter_into(self, dim, index, src_values, reduce=None) -> TensorBase:
    """Write (or reduce) ``src_values`` (array shaped like index, or a scalar) into ``self``."""
    if index.numel() == 0:
        return self
    out, idx = _as_1d(arr(self)), _index_array(index)
    _check_bounds(idx, out.shape[dim], dim)
    key = _key_along(idx, dim)
    if reduce is None:
        out[key] = src_values
    else:
        values = np.broadcast_to(src_values, idx.shape)
        ufunc = np.add if reduce in ("add", "sum", "mean") else np.multiply
        if self._dtype._name == "bool":
            ufunc = np.logical_or if ufunc is np.add else np.logical_and
        _ufunc_at(out, key, values, ufunc, self._dtype)
    return self


def _src_values(src, index) -> np.ndarray:
    s = _as_1d(arr(src))
    return s[tuple(slice(0, n) for n in _index_array(index).shape)]


def _fresh(self) -> TensorBase:
    """The contiguous copy of self a structured scatter kernel writes its output into."""
    return wrap(np.array(arr(self), order="C"), self._dtype)


def _warn_scatter_reduce_src():
    torch_warn_once("The reduce argument of torch.scatter with Tensor src is deprecated and "
                    "will be removed in a future PyTorch release. Use torch.scatter_reduce "
                    "instead for more reduction options.")


@kernel("scatter_.src")
def scatter__src(self, dim, index, src):
    dim = _scatter_checks(self, dim, index, src)
    return _scatter_into(self, dim, index, _src_values(src, index) if index.numel() else None)


@kernel("scatter_.value")
def scatter__value(self, dim, index, value):
    dim = _scatter_checks(self, dim, index)
    if index.numel() == 0:
        return self
    return _scatter_into(self, dim, index, scalar_to(value, self._dtype))


@kernel("scatter_.reduce")
def scatter__reduce(self, dim, index, src, *, reduce):
    _warn_scatter_reduce_src()
    dim = _scatter_checks(self, dim, index, src, reduce)
    return _scatter_into(self, dim, index, _src_values(src, index) if index.numel() else None,
                         reduce)


@kernel("scatter_.value_reduce")
def scatter__value_reduce(self, dim, index, value, *, reduce):
    dim = _scatter_checks(self, dim, index, None, reduce)
    if index.numel() == 0:
        return self
    return _scatter_into(self, dim, index, scalar_to(value, self._dtype), reduce)


@kernel("scatter_add_")
def scatter_add_(self, dim, index, src):
    dim = _scatter_checks(self, dim, index, src)
    return _scatter_into(self, dim, index, _src_values(src, index) if index.numel() else None,
                         "add")


_REDUCE_INIT = {"sum": 0, "mean": 0, "prod": 1}


@kernel("scatter_reduce_.two")
def scatter_reduce__two(self, dim, index, src, reduce, *, include_self=True):
    dim = _scatter_checks(self, dim, index, src, reduce, new_options=True)
    name = self._dtype._name
    if (reduce == "mean" and name == "bool") or \
            (reduce in ("amax", "amin") and self._dtype.is_complex):
        raise NotImplementedError(f'"scatter_gather_tensor_cpu_reduce_{reduce}" not '
                                  f"implemented for '{_name(self._dtype)}'")
    if index.numel() == 0:
        return self
    out, idx = _as_1d(arr(self)), _index_array(index)
    _check_bounds(idx, out.shape[dim], dim)
    key = _key_along(idx, dim)
    values = _src_values(src, index)
    if not include_self:
        if reduce in _REDUCE_INIT:
            out[key] = _REDUCE_INIT[reduce]
        else:
            out[key] = _extreme(self._dtype, lowest=reduce == "amax")
    if reduce in ("amax", "amin"):
        _scatter_extreme(out, key, values, reduce == "amax", self._dtype)
    else:
        ufunc = np.multiply if reduce == "prod" else np.add
        if name == "bool":
            ufunc = np.logical_and if reduce == "prod" else np.logical_or
        _ufunc_at(out, key, values, ufunc, self._dtype)
    if reduce == "mean":
        count = np.full(out.shape, 1 if include_self else 0, out.dtype)
        _ufunc_at(count, key, np.ones(idx.shape, out.dtype), np.add, self._dtype)
        count[count == 0] = 1
        if self._dtype.is_floating_point or self._dtype.is_complex:
            cdt = opmath(self._dtype)
            out[...] = (out.astype(cdt) / count.astype(cdt)).astype(out.dtype)
        else:
            out[...] = np.floor_divide(out, count)
    return self


def _extreme(dt, lowest: bool):
    if dt.is_floating_point:
        return -np.inf if lowest else np.inf
    if dt._name == "bool":
        return not lowest
    info = np.iinfo(D.numpy_dtype(dt))
    return info.min if lowest else info.max


def _scatter_extreme(out, key, values, is_max: bool, dt) -> None:
    """ReduceMaximum/Minimum: ``isnan(src) ? src : max(self, src)`` in order. numpy's
    maximum.at gives the same values except that std::max keeps the earlier of two equal
    values, which shows only when +0 and -0 meet: then the sequence is replayed exactly."""
    ufunc = np.maximum if is_max else np.minimum
    if not (dt.is_floating_point and _mixed_zeros(values, out[key])):
        ufunc.at(out, key, values)
        return
    flat = [f.reshape(-1) for f in np.broadcast_arrays(*key)]
    tgt = np.ravel_multi_index(flat, out.shape)
    src = values.reshape(-1)
    rank = _occurrence_rank(tgt)
    for r in range(int(rank.max()) + 1):
        sel = rank == r
        k = tuple(f[sel] for f in flat)
        s, cur = src[sel], out[k]
        better = (s > cur) if is_max else (s < cur)
        out[k] = np.where(np.isnan(s) | better, s, cur)


def _mixed_zeros(*arrays) -> bool:
    pos = neg = False
    for a in arrays:
        z = a[a == 0]
        if z.size:
            sign = np.signbit(z)
            neg |= bool(sign.any())
            pos |= bool((~sign).any())
    return pos and neg


def _functional(inplace):
    def functional(self, *args, **kwargs):
        return inplace(_fresh(self), *args, **kwargs)

    return functional


kernel("scatter.src")(_functional(scatter__src))
kernel("scatter.value")(_functional(scatter__value))
kernel("scatter.reduce")(_functional(scatter__reduce))
kernel("scatter.value_reduce")(_functional(scatter__value_reduce))
kernel("scatter_add")(_functional(scatter_add_))
kernel("scatter_reduce.two")(_functional(scatter_reduce__two))


# ------------------------------------------------------------------- index_add / copy / fill
def _index_func_checks(func, self, dim, index, source) -> None:
    """index_func_meta_impl (index_add, index_reduce)."""
    if index.dim() > 1:
        raise IndexError(f"{func}_(): Index is supposed to be a vector, but got dim: "
                         f"{index.dim()} with type: {_name(index._dtype)} and size: "
                         f"{_shape_str(index._size)}")
    if index._dtype._name not in _INDEX_DTYPES:
        raise RuntimeError(f"{func}_(): Expected dtype int32/int64 for index but got: "
                           f"{_name(index._dtype)}")
    if self._dtype != source._dtype:
        raise RuntimeError(f"{func}_(): self ({_name(self._dtype)}) and source "
                           f"({_name(source._dtype)}) must have the same scalar type")
    if not (dim == 0 or dim < source.dim()):
        raise RuntimeError(f"{func}_(): Indexing dim {dim} is out of bounds of the source "
                           f"tensor with dim {source.dim()}")
    n = 1 if source.dim() == 0 else source.size(dim)
    if index.numel() != n:
        raise RuntimeError(f"{func}_(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({source.size(dim)}), for dim: {dim}")
    ss, os_ = list(self._size), list(source._size)
    if source.dim() and self.dim():
        del ss[dim], os_[dim]
    if ss != os_:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {_shape_str(self._size)} "
                           f"source.shape = {_shape_str(source._size)}")


@kernel("index_add_")
def index_add_(self, dim, index, source, *, alpha=1):
    dim = wrap_dim(dim, self.dim())
    _index_func_checks("index_add", self, dim, index, source)
    idx = arr(index).reshape(-1)
    if idx.size == 0 or self.numel() == 0:
        return self
    a, s = arr(self), arr(source)
    dt = self._dtype
    if self.dim() <= 1:
        # serial loop in scalar_t: self[i] += source[j] * alpha (no fused multiply-add)
        if source.dim() > 1:
            raise RuntimeError(f"source.dim() ({source.dim()}) must one or zero for given "
                               f"self.dim() ({self.dim()})")
        if idx.min() < 0 or idx.max() >= self.numel():
            raise IndexError("index out of range in self")
        s = s.reshape(-1)
        if alpha != 1:
            s = s * scalar_to(alpha, dt)
        np.add.at(_as_1d(a), idx, s)
        return self
    lead = (slice(None),) * dim
    if alpha == 1:  # runs as scatter_add (opmath accumulation)
        _check_bounds(idx, self._size[dim], dim)
        _ufunc_at(a, lead + (idx,), s, np.add, dt)
        return self
    # slice by slice, add_(source_slice, alpha): one fused multiply-add per step
    if idx.min() < 0 or idx.max() >= self._size[dim]:
        raise IndexError("index out of range in self")
    vec = _vectorized_lanes(self, source, dim) if _reduced(dt) else None
    rank = _occurrence_rank(idx)
    for r in range(int(rank.max()) + 1):
        pos = np.flatnonzero(rank == r)
        tgt = idx[pos]
        a[lead + (tgt,)] = _axpy(a[lead + (tgt,)], s[lead + (pos,)], alpha, dt,
                                 None if vec is None else np.expand_dims(vec, dim))
    return self


def _vectorized_lanes(self, source, dim):
    """Which elements of a slice ``select(dim, i)`` upstream's add kernel computes in its vector
    loop: with contiguous innermost runs (in both tensors) the first multiple of 32 16-bit
    lanes of each run (AVX2: 2 x 16 per step); the rest, and strided runs, take the scalar
    loop."""
    shape = [n for d, n in enumerate(self._size) if d != dim]
    mask = np.zeros(shape, bool)
    strides = [[st for d, st in enumerate(t._stride) if d != dim] for t in (self, source)]
    run, k = 1, len(shape)
    while k > 0:  # coalesce the innermost dims while both tensors stay contiguous
        k -= 1
        if shape[k] == 1:
            continue
        if any(st[k] != run for st in strides):
            break
        run *= shape[k]
    else:
        k = -1
    if run > 1 and all(len(st) == 0 or _inner_unit(shape, st) for st in strides):
        inner = [n for n in shape[k + 1:]] if k >= 0 else shape
        lanes = np.zeros(run, bool)
        lanes[:run - run % 32] = True
        mask[...] = np.broadcast_to(lanes.reshape(inner), shape)
    return mask


def _inner_unit(shape, strides) -> bool:
    for n, st in zip(reversed(shape), reversed(strides)):
        if n != 1:
            return st == 1
    return True


def _axpy(x: np.ndarray, y: np.ndarray, alpha, dt, vec=None) -> np.ndarray:
    """x + alpha * y as upstream's add kernel computes it: contracted for float and double
    (see pointwise_math.fma); for float16/bfloat16 alpha is rounded to the dtype, the vector loop adds the exact
    product in float, the scalar loop rounds the product to the dtype first."""
    if dt.is_floating_point:
        al = scalar_to(alpha, dt)
        if _reduced(dt):
            xf = x.astype(np.float32)
            prod = y * al  # scalar loop: scalar_t * scalar_t rounds to scalar_t
            scalar = (xf + prod.astype(np.float32)).astype(x.dtype)
            vector = (xf + y.astype(np.float32) * np.float32(al)).astype(x.dtype)
            return np.where(np.broadcast_to(vec, x.shape), vector, scalar)
        return fma(y, al, x).astype(x.dtype, copy=False)
    return x + scalar_to(alpha, dt) * y


@kernel("index_add")
def index_add(self, dim, index, source, *, alpha=1):
    d = wrap_dim(dim, self.dim())
    _index_func_checks("index_add", self, d, index, source)
    return index_add_(_fresh(self), dim, index, source, alpha=alpha)


@kernel("index_copy_")
def index_copy_(self, dim, index, source):
    dim = wrap_dim(dim, self.dim())
    if index.dim() >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {index.dim()})")
    if index._dtype._name != "int64":
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_name(index._dtype)}")
    if self._dtype != source._dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_name(self._dtype)} and (source) "
                           f"{_name(source._dtype)}")
    n = index.numel()
    if source.dim() > 1 or self.dim() > 1:
        ss, os_ = list(self._size), list(source._size)
        if dim < len(ss):
            del ss[dim]
        if dim < len(os_):
            del os_[dim]
        if ss != os_:
            raise RuntimeError(
                "index_copy_(): Source/destination tensor must have same slice shapes. "
                f"Destination slice shape: {' '.join(map(str, ss))} at dimension {dim} and "
                f"source slice shape: {' '.join(map(str, os_))} at dimension 0.")
    if not (source.dim() == 0 or n == source.size(dim)):
        raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to "
                         f"source.size(dim) ({source.size(dim)})")
    idx = arr(index).reshape(-1)
    size = _nsize(self, dim)
    if idx.size and (idx.min() < 0 or idx.max() >= size):
        bad = idx[(idx < 0) | (idx >= size)][0]
        raise IndexError(f"index_copy_(): index {int(bad)} is out of bounds for dimension "
                         f"{dim} with size {size}")
    if idx.size == 0:
        return self
    a, s = _as_1d(arr(self)), _as_1d(arr(source))
    a[(slice(None),) * dim + (idx,)] = s
    return self


kernel("index_copy")(_functional(index_copy_))  # structured: a contiguous output


@kernel("index_fill_.int_Scalar")
def index_fill__scalar(self, dim, index, value):
    if index._dtype._name != "int64":
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    assert_no_overlap(self, index)
    if internal_overlap(self) == YES:
        torch_warn("Use of index_fill_ on expanded tensors is deprecated. Please clone() the "
                   "tensor before performing this operation. This also applies to advanced "
                   "indexing e.g. tensor[mask] = scalar")
    if not self._dtype.is_complex and isinstance(value, complex) or \
            (isinstance(value, TensorBase) and value.is_complex() and not self.is_complex()):
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not "
                           "supported")
    dim = wrap_dim(dim, max(self.dim(), 1))
    if index.dim() > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    idx = arr(index).reshape(-1)
    size = _nsize(self, dim)
    if idx.size and (idx.min() < -size or idx.max() >= size):
        bad = idx[(idx < -size) | (idx >= size)][0]
        raise IndexError(f"index {int(bad)} is out of bounds for dimension {dim} with size "
                         f"{size}")
    v = scalar_to(value, self._dtype)
    if idx.size:
        _as_1d(arr(self))[(slice(None),) * dim + (idx,)] = v
    return self


@kernel("index_fill_.int_Tensor")
def index_fill__tensor(self, dim, index, value):
    if value.dim() != 0:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.dim()} dimension(s).")
    return index_fill__scalar(self, dim, index, value.item())


def _cloned(inplace):
    def functional(self, *args, **kwargs):
        from .copy import _clone

        return inplace(_clone(self, None), *args, **kwargs)

    return functional


kernel("index_fill.int_Scalar")(_cloned(index_fill__scalar))
kernel("index_fill.int_Tensor")(_cloned(index_fill__tensor))


# ------------------------------------------------------------------------------------- masks
def expand_inplace_check(target, shape) -> None:
    """at::expand_inplace: ``shape`` must broadcast to ``target`` without growing it."""
    if len(shape) > len(target):
        raise RuntimeError(f"expand: the number of sizes provided ({len(target)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({len(shape)})")
    for i in range(len(shape) - 1, -1, -1):
        j = len(target) - len(shape) + i
        if shape[i] != 1 and shape[i] != target[j]:
            raise RuntimeError(f"The expanded size of the tensor ({target[j]}) must match the "
                               f"existing size ({shape[i]}) at non-singleton dimension {j}.  "
                               f"Target sizes: {_shape_str(target)}.  Tensor sizes: "
                               f"{_shape_str(shape)}")


@kernel("masked_select")
def masked_select(self, mask):
    if mask._dtype._name != "bool":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = infer_size(mask._size, self._size)
    a = np.broadcast_to(arr(self), shape)
    m = np.broadcast_to(arr(mask), shape)
    return wrap(a[m] if shape else a.reshape(1)[m.reshape(1)], self._dtype)


@kernel("masked_scatter_")
def masked_scatter_(self, mask, source):
    if mask._dtype._name == "uint8":
        torch_warn("masked_scatter_ received a mask with dtype torch.uint8, this behavior is "
                   "now deprecated,please use a mask with dtype torch.bool instead.")
    if mask._dtype._name != "bool":
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_name(mask._dtype)}")
    if self._dtype != source._dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           f"{_name(self._dtype)} and {_name(source._dtype)}")
    expand_inplace_check(self._size, mask._size)
    a = arr(self)
    m = np.broadcast_to(arr(mask), a.shape)
    count = int(np.count_nonzero(m))
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if count:
        src = arr(source).reshape(-1)[:count]
        if a.ndim:
            a[m] = src
        else:
            a[()] = src[0]
    return self


@kernel("masked_scatter")
def masked_scatter(self, mask, source):
    shape = infer_size(mask._size, self._size)
    out = wrap(np.array(np.broadcast_to(arr(self), shape), order="C"), self._dtype)
    return masked_scatter_(out, mask, source)


# ---------------------------------------------------------------------------- take / put
def _flat_bounds(idx: np.ndarray, n: int) -> None:
    if idx.size and (idx.min() < -n or idx.max() >= n):
        bad = idx[(idx < -n) | (idx >= n)].reshape(-1)[0]
        raise IndexError(f"out of range: tried to access index {int(bad)} on a tensor of {n} "
                         "elements.")


@kernel("take")
def take(self, index):
    if index._dtype._name != "int64":
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_name(index._dtype)}")
    if self.numel() == 0 and index.numel() != 0:
        raise IndexError("take(): tried to take from an empty tensor")
    idx = arr(index)
    if idx.size == 0:
        return empty(index._size, self._dtype)
    _flat_bounds(idx, self.numel())
    return wrap(arr(self).reshape(-1)[idx], self._dtype)


@kernel("put_")
def put_(self, index, source, accumulate=False):
    if index._dtype._name != "int64":
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{_name(index._dtype)}")
    if self._dtype != source._dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_name(self._dtype)} and source.dtype = "
                           f"{_name(source._dtype)}")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, index.numel() "
                         f"= {index.numel()}")
    if self.numel() == 0 and index.numel() != 0:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    assert_no_internal_overlap(self)
    assert_no_overlap(self, index)
    assert_no_overlap(self, source)
    if index.numel() == 0:
        return self
    n = self.numel()
    idx = arr(index).reshape(-1)
    _flat_bounds(idx, n)
    a = arr(self)
    a = _as_1d(a)
    key = np.unravel_index(np.where(idx < 0, idx + n, idx), a.shape)
    src = arr(source).reshape(-1)
    if accumulate:
        np.add.at(a, key, src)
    else:
        a[key] = src
    return self


kernel("put")(_cloned(put_))


# ----------------------------------------------------------------------------------- nonzero
@kernel("nonzero")
def nonzero(self):
    a = arr(self)
    coords = np.argwhere(a)  # (N, ndim) in logical order
    n = coords.shape[0]
    out = empty((n, a.ndim), INT64, stride=(1, n))  # upstream fills an (ndim, N) buffer
    out._np[...] = coords
    return out


@kernel("nonzero_static")
def nonzero_static(self, *, size, fill_value=-1):
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got "
                           f"{size}")
    a = arr(self)
    coords = np.argwhere(a)[:size]
    out = np.full((size, a.ndim), fill_value, np.int64)
    out[:coords.shape[0]] = coords
    return wrap(out, INT64)


# ------------------------------------------------------------------------------ index_reduce
_warned_index_reduce = False


def _dim_key(shape, dim: int, idx: np.ndarray) -> tuple:
    """Open-mesh index of a tensor of ``shape`` with ``idx`` along ``dim``."""
    key = []
    for d, s in enumerate(shape):
        if d == dim:
            shp = [1] * len(shape)
            shp[d] = idx.size
            key.append(idx.reshape(shp))
        else:
            shp = [1] * len(shape)
            shp[d] = s
            key.append(np.arange(s).reshape(shp))
    return tuple(key)


@kernel("index_reduce_")
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    global _warned_index_reduce
    dim = wrap_dim(dim, self.dim())
    _index_func_checks("index_reduce", self, dim, index, source)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if not _warned_index_reduce:  # TORCH_WARN_ONCE in the kernel, after the meta checks
        _warned_index_reduce = True
        torch_warn("index_reduce() is in beta and the API may change at any time.")
    idx = arr(index).reshape(-1)
    if idx.size == 0 or self.numel() == 0:
        return self
    size = _nsize(self, dim)
    if idx.min() < 0 or idx.max() >= size:
        raise IndexError("index out of range in self")
    out, src = _as_1d(arr(self)), _as_1d(arr(source))
    key = _dim_key(out.shape, dim, idx)
    dt = self._dtype
    if not include_self:
        init = 1 if reduce == "prod" else 0 if reduce == "mean" else \
            _extreme(dt, lowest=reduce == "amax")
        out[key] = init
    # slice by slice in index order, each step rounded in the dtype (no opmath buffer)
    if reduce == "prod":
        np.multiply.at(out, key, src)
    elif reduce == "mean":
        np.add.at(out, key, src)
        count = np.full(out.shape, 1 if include_self else 0, out.dtype)
        _ufunc_at(count, key, np.ones(src.shape, out.dtype), np.add, dt)
        count[count == 0] = 1
        if dt.is_floating_point or dt.is_complex:
            cdt = opmath(dt)
            out[...] = (out.astype(cdt) / count.astype(cdt)).astype(out.dtype)
        else:
            out[...] = np.floor_divide(out, count)
    else:
        _scatter_extreme(out, key, src, reduce == "amax", dt)
    return self


kernel("index_reduce")(_functional(index_reduce_))


# ----------------------------------------------------------------------------- out= variants


def check_structured_out(out: TensorBase, dt) -> None:
    if out._dtype != dt:
        raise RuntimeError(f"Expected out tensor to have dtype {typemeta(dt._name, dt._cpp_name)}, "
                           f"but got {typemeta(out._dtype._name, out._dtype._cpp_name)} instead")


def write_out(out: TensorBase, result: TensorBase, *inputs, check_first=True) -> TensorBase:
    """Refuse overlaps as upstream's out= kernels do (before resizing ``out``, or after it for
    structured kernels: ``check_first=False``), resize (with upstream's warning when ``out``
    had elements), then copy ``result`` in."""
    from ..dispatch.structured import resize_out
    from .copy import copy_into

    if not check_first:
        resize_out(out, result._size)
    assert_no_internal_overlap(out)
    for t in inputs:
        assert_no_overlap(out, t)
    resize_out(out, result._size)
    copy_into(out, result)
    return out


@kernel("gather.out")
def gather_out(self, dim, index, sparse_grad=False, *, out):
    result = gather(self, dim, index, sparse_grad)
    check_structured_out(out, self._dtype)
    from ..dispatch.structured import resize_out

    resize_out(out, result._size)  # the meta sizes out, then checks it against index
    assert_no_partial_overlap(out, index)
    return write_out(out, result, self, check_first=False)


@kernel("index_select.out")
def index_select_out(self, dim, index, *, out):
    if out._dtype != self._dtype:
        raise RuntimeError("index_select(): self and result must have the same scalar type")
    result = index_select(self, dim, index)
    return write_out(out, result, self, index)


@kernel("masked_select.out")
def masked_select_out(self, mask, *, out):
    if mask._dtype._name != "bool":
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    if out._dtype != self._dtype:
        raise RuntimeError("masked_select(): self and result must have the same scalar type")
    result = masked_select(self, mask)
    return write_out(out, result, self, mask)


@kernel("take.out")
def take_out(self, index, *, out):
    if index._dtype._name == "int64" and out._dtype != self._dtype:
        raise RuntimeError(f"take(): self and out expected to have the same dtype, but got "
                           f"self.dtype = {_name(self._dtype)} and out.dtype = "
                           f"{_name(out._dtype)}")
    result = take(self, index)
    return write_out(out, result, self, index)
