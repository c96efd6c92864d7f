"""Joining and shape kernels: cat, stack, repeat, repeat_interleave, flip, roll, tril/triu, padding
(constant, reflection, replication), diag_embed, tril/triu_indices, searchsorted/bucketize,
and the CompositeImplicitAutograd operators of this family that upstream writes in C++ only
(no Python decomposition): diag, tile, hstack/vstack/dstack/column_stack, fliplr/flipud,
take_along_dim, repeat_interleave.self_int/self_Tensor, pad.

Output layouts follow upstream: cat picks one memory format for all inputs
(cat_compute_output_memory_format), flip keeps a dense input's strides (empty_like), padding
keeps channels-last inputs channels-last, everything else is contiguous.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.cast import cast_array
from ..core.construct import empty, from_result
from ..core.layouts import (channels_last, channels_last_3d, channels_last_strides, contiguous_format,
                            suggest_memory_format)
from ..core.tensor import TensorBase, contiguous_strides, wrap_dim
from .support.common import INT64, arr, result_type, wrap
from .indexing import _name, _shape_str, infer_size
from .support.scalar import scalar_to
from ..ops.kernel_registry import kernel
from ..platform.torch_warn import torch_warn_once


def _call(name, *args, **kwargs):
    from ..dispatch.call import call

    return call(name, *args, **kwargs)


# ---------------------------------------------------------------------------- memory format
_FORMAT_NAMES = {channels_last: "cl", channels_last_3d: "cl3d", contiguous_format: "contiguous"}


def suggest_format(t: TensorBase) -> str:
    """TensorImpl::suggest_memory_format: 'cl' (4-D), 'cl3d' (5-D) or 'contiguous'."""
    return _FORMAT_NAMES[suggest_memory_format(t._size, t._stride)]


def format_strides(size, fmt: str) -> tuple:
    return contiguous_strides(size) if fmt == "contiguous" else channels_last_strides(size)


def _out(result: np.ndarray, dt, fmt: str = "contiguous") -> TensorBase:
    if fmt == "contiguous":
        return wrap(result if result.flags.c_contiguous else np.array(result, order="C"), dt)
    out = empty(result.shape, dt, stride=format_strides(result.shape, fmt))
    np.copyto(out._np, result)
    return out


def _in(t: TensorBase, dt) -> np.ndarray:
    a = arr(t)
    return a if t._dtype == dt else cast_array(a, t._dtype, dt)


# ------------------------------------------------------------------------------- cat / stack
def _skipped(t: TensorBase) -> bool:
    """The legacy rule: a 1-D tensor of size 0 takes no part in cat (whatever its shape)."""
    return len(t._size) == 1 and t._size[0] == 0


def _cat_dense(tensors, dim):
    """cat of dense tensors of one dtype and rank (a KV cache growing by a token, a rotary's
    halves): numpy's concatenate into a C-contiguous result, or None when the general path
    must decide (errors, layouts, casts)."""
    first = tensors[0]
    dt, size = first._dtype, first._size
    nd = len(size)
    if nd == 0 or not -nd <= dim < nd:
        return None
    parts = []
    for t in tensors:
        a = t._np
        if a is None or t._dtype is not dt or a.ndim != nd or not a.size:
            return None
        parts.append(a)
    if nd >= 4 and _all_channels_last(tensors):
        return None  # every input channels-last: so is the result (the general path)
    try:
        r = np.concatenate(parts, dim)
    except ValueError:
        return None  # mismatched sizes: the general path names them as upstream does
    # C-contiguous, as upstream's contiguous result (numpy follows strided inputs' order)
    return from_result(r if r.flags.c_contiguous else np.ascontiguousarray(r), dt)


# (sizes, strides) -> whether suggest_memory_format is not contiguous (a few shapes repeat)
_NOT_CONTIGUOUS_FORMAT: dict = {}


def _all_channels_last(tensors) -> bool:
    for t in tensors:
        key = (t._size, t._stride)
        cl = _NOT_CONTIGUOUS_FORMAT.get(key)
        if cl is None:
            if len(_NOT_CONTIGUOUS_FORMAT) > 1024:
                _NOT_CONTIGUOUS_FORMAT.clear()
            cl = _NOT_CONTIGUOUS_FORMAT[key] = suggest_format(t) != "contiguous"
        if not cl:
            return False
    return True


@kernel("cat")
def cat(tensors, dim=0):
    if len(tensors) > 1:
        out = _cat_dense(tensors, dim)
        if out is not None:
            return out
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if not t._size:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be "
                               "concatenated")
    valid = [t for t in tensors if not _skipped(t)]
    if valid:
        dim = wrap_dim(dim, valid[0].dim())
    dt = result_type(*tensors)
    fmt = "contiguous"
    for t in tensors:
        f = suggest_format(t)
        if f == "contiguous" or (fmt != "contiguous" and f != fmt):
            fmt = "contiguous"
            break
        fmt = f
    if not valid:
        return empty((0,), dt)
    first = valid[0]
    for i, t in enumerate(tensors):
        if _skipped(t):
            continue
        if t.dim() != first.dim():
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.dim()} "
                               f"and {t.dim()}")
        for d in range(first.dim()):
            if d != dim and t._size[d] != first._size[d]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. "
                                   f"Expected size {first._size[d]} but got size {t._size[d]} "
                                   f"for tensor number {i} in the list.")
    parts = [_in(t, dt) for t in valid]
    if len(parts) == 1:
        return _out(np.array(parts[0], order="C") if fmt == "contiguous" else parts[0], dt, fmt)
    return _out(np.concatenate(parts, axis=dim), dt, fmt)


@kernel("cat.out")
def cat_out(tensors, dim=0, *, out):
    """cat into ``out``: every input is cast straight to out's dtype (not through the
    promoted type), after upstream's type and overlap checks."""
    from ..core.promotion import can_cast
    from ..core.mem_overlap import assert_no_internal_overlap, assert_no_overlap
    from ..dispatch.structured import resize_out

    result = cat(tensors, dim)  # shape, checks and promoted dtype
    if not can_cast(result._dtype, out._dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{_name(out._dtype)}")
    resize_out(out, result._size)
    assert_no_internal_overlap(out)
    for t in tensors:
        assert_no_overlap(out, t)
    parts = [_in(t, out._dtype) for t in tensors if not _skipped(t)]
    if parts and out.numel():
        d = wrap_dim(dim, len(result._size))
        np.copyto(arr(out), np.concatenate(parts, axis=d) if len(parts) > 1 else parts[0])
    return out


@kernel("stack")
def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    ndim = tensors[0].dim()
    dim = wrap_dim(dim, ndim + 1)
    first = tensors[0]._size
    for i, t in enumerate(tensors[1:], 1):
        if t._size != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{_shape_str(first)} at entry 0 and {_shape_str(t._size)} at "
                               f"entry {i}")
    size = list(first)
    size.insert(dim, len(tensors))
    if dim < ndim:  # cat along dim, then split it with a view (keeps cat's memory format)
        joined = cat(tensors, dim)
        from .views import compute_stride, view_of

        stride = compute_stride(joined._size, joined._stride, size)
        out = view_of(joined, size, stride, joined._offset)
        out._view_base = None
        return out
    return cat([_unsqueezed(t, dim) for t in tensors], dim)


def _unsqueezed(t, dim):
    from .views import view_of

    size = list(t._size)
    stride = list(t._stride)
    size.insert(dim, 1)
    stride.insert(dim, stride[dim] * size[dim + 1] if dim < len(stride) else 1)
    return view_of(t, size, stride, t._offset)


kernel("_stack")(stack)


# ------------------------------------------------------------------------------ repeat family
@kernel("repeat")
def repeat(self, repeats):
    repeats = [int(r) for r in repeats]
    if len(repeats) < self.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    padded = [1] * (len(repeats) - self.dim()) + list(self._size)
    target = [p * r for p, r in zip(padded, repeats)]
    if any(s < 0 for s in target):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{next(s for s in target if s < 0)}: {target}")
    a = arr(self).reshape(padded)
    return wrap(np.tile(a, repeats) if a.ndim else a.copy(), self._dtype)


@kernel("repeat_interleave.Tensor")
def repeat_interleave_tensor(repeats, *, output_size=None):
    if repeats._dtype._name not in ("int64", "int32"):
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                  f"'{_name(repeats._dtype)}'")
    if repeats.dim() != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    r = arr(repeats)
    if r.size == 0:
        return wrap(np.empty(0, r.dtype), repeats._dtype)
    if output_size is None and (r < 0).any():
        raise RuntimeError("repeats can not be negative")
    if output_size is not None and int(r.sum()) != output_size:
        raise RuntimeError("allocated size does not match required size")
    return wrap(np.repeat(np.arange(r.size, dtype=r.dtype), np.maximum(r, 0)), repeats._dtype)


@kernel("repeat_interleave.self_Tensor", composite=True)
def repeat_interleave_self_tensor(self, repeats, dim=None, *, output_size=None):
    inp = self
    if dim is None:
        inp = _call("flatten.using_ints", self, 0, -1)
        dim = 0
    dim = wrap_dim(dim, inp.dim())
    if repeats.dim() == 0 or (repeats.dim() == 1 and repeats._size[0] == 1):
        reps = _call("expand", _call("reshape", repeats, [1]), [inp.size(dim)])
    elif repeats.dim() == 1:
        if repeats._size[0] != inp.size(dim):
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {repeats._size[0]} and input.size({dim}) = "
                               f"{inp.size(dim)}")
        reps = repeats
    else:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    index = _call("repeat_interleave.Tensor", reps, output_size=output_size)
    return _call("index_select", inp, dim, index)


@kernel("repeat_interleave.self_int", composite=True)
def repeat_interleave_self_int(self, repeats, dim=None, *, output_size=None):
    import torch

    inp = self if dim is not None else _call("flatten.using_ints", self, 0, -1)
    d = wrap_dim(0 if dim is None else dim, self.dim())
    if repeats < 0:
        raise RuntimeError("Repeats must be non-negative")
    inp = _call("unsqueeze", inp, d + 1)
    shape = list(inp.shape)
    shape[d + 1] = repeats
    inp = _call("expand", inp, shape)
    inp = _call("clone", inp, memory_format=torch.contiguous_format)
    return _call("flatten.using_ints", inp, d, d + 1)


@kernel("tile", composite=True)
def tile(self, dims):
    dims = list(dims)
    if self.dim() > len(dims):
        dims = [1] * (self.dim() - len(dims)) + dims
    return _call("repeat", self, dims)


# ---------------------------------------------------------------------------- flip / roll / tri
@kernel("flip")
def flip(self, dims):
    axes = [wrap_dim(d, self.dim()) for d in dims]
    seen = set()
    for d in axes:
        if d in seen:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        seen.add(d)
    from .copy import strides_for

    out = empty(self._size, self._dtype, stride=strides_for(self, None))
    a = arr(self)
    np.copyto(out._np, np.flip(a, axes) if axes and a.ndim else a)
    return out


@kernel("fliplr", composite=True)
def fliplr(self):
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return _call("flip", self, [1])


@kernel("flipud", composite=True)
def flipud(self):
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return _call("flip", self, [0])


@kernel("roll")
def roll(self, shifts, dims=()):
    shifts, dims = list(shifts), list(dims or ())
    if len(dims) != 1 or len(shifts) != 1:
        if not shifts:
            raise RuntimeError("`shifts` required")
        if not dims and len(shifts) == 1:  # roll the flattened tensor
            flat = arr(self).reshape(-1)
            return wrap(np.roll(flat, shifts[0]).reshape(self._size), self._dtype)
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:{len(dims)}")
        out = self
        for s, d in zip(shifts, dims):
            out = roll(out, [s], [d])
        return out
    if self.numel() == 0:
        from .copy import _clone

        return _clone(self, None)
    if self.dim() == 0:  # self.size(dim) of a 0-dim tensor
        raise IndexError(f"Dimension specified as {dims[0]} but tensor has no dimensions")
    d = wrap_dim(dims[0], self.dim())
    # upstream: cat(narrow(start..), narrow(..start)) along d, so cat's memory format rule
    fmt = suggest_format(self)
    return _out(np.roll(arr(self), shifts[0], axis=d), self._dtype, fmt)


def _tri(self, diagonal, lower: bool, name: str):
    if self.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    a = arr(self)
    rows, cols = a.shape[-2:]
    r = np.arange(rows)[:, None]
    c = np.arange(cols)[None, :]
    keep = (c - r <= diagonal) if lower else (c - r >= diagonal)
    out = np.where(keep, a, np.zeros((), a.dtype))
    return wrap(np.array(out, order="C"), self._dtype)


@kernel("tril")
def tril(self, diagonal=0):
    return _tri(self, diagonal, True, "tril")


@kernel("triu")
def triu(self, diagonal=0):
    return _tri(self, diagonal, False, "triu")


def _tri_indices(row, col, offset, dtype, lower: bool):
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    dt = dtype or INT64
    if dt._name not in ("int64", "int32"):
        raise RuntimeError(f'"{"tril" if lower else "triu"}_indices" not implemented for '
                           f"'{_name(dt)}'")
    r, c = np.indices((row, col)).reshape(2, -1)
    keep = (c - r <= offset) if lower else (c - r >= offset)
    return wrap(np.stack([r[keep], c[keep]]).astype(D.numpy_dtype(dt)), dt)


@kernel("tril_indices")
def tril_indices(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _tri_indices(row, col, offset, dtype, True)


@kernel("triu_indices")
def triu_indices(row, col, offset=0, *, dtype=None, layout=None, device=None, pin_memory=None):
    return _tri_indices(row, col, offset, dtype, False)


# --------------------------------------------------------------------------------- diagonals
@kernel("diag_embed")
def diag_embed(self, offset=0, dim1=-2, dim2=-1):
    nd = self.dim() + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    a = arr(self)
    n = abs(offset) + (a.shape[-1] if a.ndim else 1)
    sizes = list(a.shape[:-1])
    sizes.insert(min(d1, d2), n)
    sizes.insert(max(d1, d2), n)
    out = np.zeros(sizes, a.dtype)
    k = a.shape[-1] if a.ndim else 1
    i = np.arange(k)
    rows, cols = (i, i + offset) if offset >= 0 else (i - offset, i)
    # result.diagonal(offset, dim1, dim2).copy_(self): the diagonal's own dim is the last one
    target = np.moveaxis(out, (d1, d2), (-2, -1))
    target[..., rows, cols] = a
    return wrap(out, self._dtype)


@kernel("diag", composite=True)
def diag(self, diagonal=0):
    if self.dim() not in (1, 2):
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {self.dim()}D")
    if self.dim() == 1:
        return _call("diag_embed", self, diagonal)
    return _call("diagonal_copy", self, diagonal)


# ------------------------------------------------------------------------------ stack family
@kernel("hstack", composite=True)
def hstack(tensors):
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    rep = [_call("atleast_1d", t) for t in tensors]
    return _call("cat", rep, 0 if rep[0].dim() == 1 else 1)


@kernel("vstack", composite=True)
def vstack(tensors):
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return _call("cat", [_call("atleast_2d", t) for t in tensors], 0)


@kernel("dstack", composite=True)
def dstack(tensors):
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return _call("cat", [_call("atleast_3d", t) for t in tensors], 2)


@kernel("hstack.out", composite=True)
def hstack_out(tensors, *, out):
    if not tensors:
        raise RuntimeError("hstack expects a non-empty TensorList")
    rep = [_call("atleast_1d", t) for t in tensors]
    return _call("cat.out", rep, 0 if rep[0].dim() == 1 else 1, out=out)


@kernel("vstack.out", composite=True)
def vstack_out(tensors, *, out):
    if not tensors:
        raise RuntimeError("vstack expects a non-empty TensorList")
    return _call("cat.out", [_call("atleast_2d", t) for t in tensors], 0, out=out)


@kernel("dstack.out", composite=True)
def dstack_out(tensors, *, out):
    if not tensors:
        raise RuntimeError("dstack expects a non-empty TensorList")
    return _call("cat.out", [_call("atleast_3d", t) for t in tensors], 2, out=out)


@kernel("column_stack.out", composite=True)
def column_stack_out(tensors, *, out):
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    parts = [_call("reshape", t, [t.numel(), 1]) if t.dim() <= 1 else t for t in tensors]
    return _call("hstack.out", parts, out=out)


@kernel("column_stack", composite=True)
def column_stack(tensors):
    if not tensors:
        raise RuntimeError("column_stack expects a non-empty TensorList")
    parts = [_call("reshape", t, [t.numel(), 1]) if t.dim() <= 1 else t for t in tensors]
    return _call("hstack", parts)


@kernel("cartesian_prod", composite=True)
def cartesian_prod(tensors):
    tensors = list(tensors)
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {_shape_str(t._size)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = _call("meshgrid.indexing", tensors, indexing="ij")
    return _call("stack", [_call("flatten.using_ints", g, 0, -1) for g in grids], 1)


@kernel("combinations", composite=True)
def combinations(self, r=2, with_replacement=False):
    if self.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {_shape_str(self._size)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _call("empty.memory_format", [0], dtype=self.dtype, device=self.device)
    grids = _call("meshgrid.indexing", [self] * r, indexing="ij")
    # _triu_mask: indices i < j < k ... (or <= with replacement)
    rng = _call("arange", self.numel(), dtype=INT64, device=self.device)
    index_grids = _call("meshgrid.indexing", [rng] * r, indexing="ij")
    mask = _call("full", list(index_grids[0].shape), True, dtype=D.BY_NAME["bool"],
                 device=self.device)
    cmp = "le.Tensor" if with_replacement else "lt.Tensor"
    for i in range(r - 1):
        mask = _call("mul.Tensor", mask, _call(cmp, index_grids[i], index_grids[i + 1]))
    return _call("stack", [_call("masked_select", g, mask) for g in grids], 1)


def _take_along(self, indices, dim):
    """_take_along_dim_helper: both sides broadcast (except along dim), indices wrapped."""
    if self.dim() != indices.dim():
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {self.dim()} dimensions for input, "
                           f"and {indices.dim()} dimensions for indices")
    if indices._dtype._name != "int64":
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_name(indices._dtype)}")
    dim = wrap_dim(dim, self.dim())
    self_sizes = list(self._size)
    self_sizes[dim] = indices._size[dim]
    idx = _call("broadcast_to", indices, list(infer_size(self_sizes, indices._size)))
    ind_sizes = list(indices._size)
    ind_sizes[dim] = self._size[dim]
    src = _call("broadcast_to", self, list(infer_size(ind_sizes, self._size)))
    idx = _call("remainder.Scalar", idx, src.size(dim))  # negative indices wrap
    return src, idx, dim


@kernel("take_along_dim", composite=True)
def take_along_dim(self, indices, dim=None):
    if dim is None:
        return _call("gather", _call("view", self, [-1]), 0, _call("view", indices, [-1]))
    src, idx, dim = _take_along(self, indices, dim)
    return _call("gather", src, dim, idx)


@kernel("take_along_dim.out", composite=True)
def take_along_dim_out(self, indices, dim=None, *, out):
    if dim is None:
        return _call("gather.out", _call("view", self, [-1]), 0, _call("view", indices, [-1]),
                     out=out)
    src, idx, dim = _take_along(self, indices, dim)
    return _call("gather.out", src, dim, idx, out=out)


# ------------------------------------------------------------------------- narrow and splits
@kernel("narrow_copy")
def narrow_copy(self, dim, start, length):
    """TensorShape.cpp narrow_copy_dense_cpu: a contiguous copy of the narrowed slice."""
    if self.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    if dim < 0:
        dim = wrap_dim(dim, self.dim())
    elif dim >= self.dim():
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, "
                           "please report an enhancement request to PyTorch.)")
    size = self._size[dim]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if not (length >= 0 and start <= size - length):
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    key = (slice(None),) * dim + (slice(start, start + length),)
    return wrap(np.array(arr(self)[key], order="C"), self._dtype)


def _split_checked(name, self, min_dim, dim, sections=None):
    if self.dim() < min_dim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, "
                           f"but got a tensor with {self.dim()} dimensions!")
    if sections is not None and (sections == 0 or self._size[dim] % sections):
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                           f"size of the dimension {self._size[dim]} is not divisible by the "
                           f"split_size {sections}!")


def _register_split(name, min_dim, dim_of):
    def by_sections(self, sections):
        dim = dim_of(self)
        _split_checked(name, self, min_dim, dim, sections)
        return _call("tensor_split.sections", self, sections, dim)

    def by_indices(self, indices):
        _split_checked(name, self, min_dim, 0)
        return _call("tensor_split.indices", self, list(indices), dim_of(self))

    kernel(f"{name}.int", composite=True)(by_sections)
    kernel(f"{name}.array", composite=True)(by_indices)


_register_split("hsplit", 1, lambda t: 0 if t.dim() == 1 else 1)
_register_split("vsplit", 2, lambda t: 0)
_register_split("dsplit", 3, lambda t: 2)


# ----------------------------------------------------------------------------------- padding
@kernel("constant_pad_nd")
def constant_pad_nd(self, pad, value=0):
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    nd, npad = self.dim(), len(pad) // 2
    if nd < npad:
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)}while the input has "
                           f"{nd}dimensions.")
    a = arr(self)
    crop = [slice(None)] * nd
    positive = False
    for i in range(nd - npad, nd):
        lo, hi = pad[2 * (nd - i - 1)], pad[2 * (nd - i - 1) + 1]
        n = a.shape[i]
        start = -lo if lo < 0 else 0
        length = n + lo if lo < 0 else n
        if length < 0 or (hi < 0 and length + hi < 0):
            raise RuntimeError("narrow(): length must be non-negative.")
        if hi < 0:
            length += hi
        crop[i] = slice(start, start + length)
        positive |= lo > 0 or hi > 0
    inner = a[tuple(crop)]
    if not positive:
        from .copy import _clone

        return _clone(_narrowed(self, inner), None)
    shape = list(a.shape)
    for k in range(npad):
        i = nd - npad + k
        lo, hi = pad[len(pad) - 2 * (k + 1)], pad[len(pad) - 2 * (k + 1) + 1]
        shape[i] = a.shape[i] + lo + hi
        if shape[i] < 0:
            raise RuntimeError(f"The input size {a.shape[i]}, plus negative padding {lo} and {hi} "
                               f"resulted in a negative output size, which is invalid. Check "
                               f"dimension {i} of your input.")
    fmt = suggest_format(self)
    out = empty(shape, self._dtype, stride=format_strides(shape, fmt))
    out._np[...] = scalar_to(value, self._dtype)
    place = [slice(None)] * nd
    for i in range(nd - npad, nd):
        lo, hi = pad[2 * (nd - i - 1)], pad[2 * (nd - i - 1) + 1]
        place[i] = slice(max(lo, 0), shape[i] - max(hi, 0))
    out._np[tuple(place)] = inner
    return out


def _narrowed(self, inner: np.ndarray) -> TensorBase:
    """The view of ``self`` that the numpy view ``inner`` is (for clone's layout rules)."""
    from .views import view_of

    item = self._dtype.itemsize
    base = arr(self)
    offset = self._offset + (inner.__array_interface__["data"][0] -
                             base.__array_interface__["data"][0]) // item \
        if inner.size and base.size else self._offset
    return view_of(self, inner.shape, tuple(s // item for s in inner.strides), offset)


def _pad_check(self, padding, k: int, name: str):
    """Checks of reflection/replication_pad{k}d, as upstream words them."""
    padding = [int(p) for p in padding]
    if len(padding) != 2 * k:
        raise RuntimeError(f"padding size is expected to be {2 * k}, but got: {len(padding)}")
    if not _pad_nonzero(self, k):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           f"batch size and other non-zero dimensions for input, but got: "
                           f"{_shape_str(self._size)}")
    if self._dtype._name == "bool":
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")
    return padding


def _pad_nonzero(self, k: int) -> bool:
    nd = self.dim()
    if nd not in (k + 1, k + 2):
        return False
    dims = self._size[1:] if nd == k + 2 else self._size
    return all(s != 0 for s in dims)


def _pad_index(n: int, lo: int, hi: int, reflect: bool) -> np.ndarray:
    """Source index of every output position along one padded dim (ReflectionPad/ReplicationPad
    kernels): the output position minus the left pad, reflected or clamped into [0, n)."""
    t = np.arange(n + lo + hi) - lo
    if reflect:
        t = np.abs(t)
        return np.where(t > n - 1, 2 * (n - 1) - t, t)
    return np.clip(t, 0, n - 1)


def _pad(self, padding, k: int, reflect: bool):
    name = f"{'reflection' if reflect else 'replication'}_pad{k}d"
    padding = _pad_check(self, padding, k, name)
    nd = self.dim()
    a = arr(self)
    dims = list(range(nd - k, nd))
    pads = [(padding[2 * (nd - 1 - d)], padding[2 * (nd - 1 - d) + 1]) for d in dims]
    if reflect:
        for d, (lo, hi) in zip(dims, pads):
            n = a.shape[d]
            if not (lo < n and hi < n):
                arg = 4 + 2 * (nd - 1 - d)
                raise RuntimeError(f"Argument #{arg}: Padding size should be less than the "
                                   f"corresponding input dimension, but got: padding ({lo}, {hi}) "
                                   f"at dimension {d} of input {_shape_str(self._size)}")
    outs = [a.shape[d] + lo + hi for d, (lo, hi) in zip(dims, pads)]
    if any(o < 1 for o in outs):
        labels = "DHW"[3 - k:]
        ins = ", ".join(f"{l}: {a.shape[d]}" for l, d in zip(labels, dims))
        calc = " ".join(f"{l}: {o}" for l, o in zip(labels, outs))
        raise RuntimeError(f"input ({ins}) is too small. Calculated output {calc}")
    out = a
    for d, (lo, hi) in zip(dims, pads):
        out = np.take(out, _pad_index(a.shape[d], lo, hi, reflect), axis=d)
    fmt = suggest_format(self)
    return _out(out, self._dtype, fmt)


for _k in (1, 2, 3):
    kernel(f"reflection_pad{_k}d")(lambda self, padding, _k=_k: _pad(self, padding, _k, True))
    kernel(f"replication_pad{_k}d")(lambda self, padding, _k=_k: _pad(self, padding, _k, False))


@kernel("_pad_circular", composite=True)
def _pad_circular(self, pad):
    """Padding.cpp _pad_circular_symint: copy the input into the middle of a new tensor, then
    wrap: the left pad copies from the right end of the output, the right pad from the left
    (corners are written more than once)."""
    pad = [int(p) for p in pad]
    shape = list(self._size)
    n_pad = len(pad) // 2
    n_lead = len(shape) - n_pad
    if n_lead not in (1, 2):
        raise RuntimeError(f"Invalid padding size, expected 1 or 2 non-padded dimensions, which "
                           f"would be equivalent to padding of length {(len(shape) - 1) * 2} or "
                           f"{(len(shape) - 2) * 2} respectively but got {len(pad)}")
    out_shape = list(shape)
    for i in range(n_pad):
        lo, hi = pad[2 * (n_pad - i - 1)], pad[2 * (n_pad - i - 1) + 1]
        size = shape[n_lead + i]
        out_shape[n_lead + i] = size + lo + hi
        if not (lo <= size and hi <= size):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if out_shape[n_lead + i] < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension.")
    out = _call("new_empty", self, out_shape)
    if out.numel() == 0:
        return out
    out_slice, in_slice = out, self
    for i in range(n_pad):
        d = n_lead + i
        lo, hi = pad[2 * (n_pad - i - 1)], pad[2 * (n_pad - i - 1) + 1]
        out_slice = _call("narrow", out_slice, d, max(lo, 0),
                          out_shape[d] - max(lo, 0) - max(hi, 0))
        in_slice = _call("narrow", in_slice, d, max(-lo, 0),
                         shape[d] - max(-lo, 0) - max(-hi, 0))
    _call("copy_", out_slice, in_slice)
    for i in range(n_pad):
        d = n_lead + i
        lo, hi = pad[2 * (n_pad - i - 1)], pad[2 * (n_pad - i - 1) + 1]
        if lo > 0:
            _call("copy_", _call("narrow", out, d, 0, lo),
                  _call("narrow", out, d, out_shape[d] - lo - max(hi, 0), lo))
        if hi > 0:
            _call("copy_", _call("narrow", out, d, out_shape[d] - hi, hi),
                  _call("narrow", out, d, max(lo, 0), hi))
    return out


_PAD_MODES = {"constant": 0, "reflect": 1, "replicate": 2, "circular": 3}


@kernel("pad", composite=True)
def pad(self, pad, mode="constant", value=None):
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    return _pad_enum(self, pad, _PAD_MODES[mode], value)


@kernel("_pad_enum", composite=True)
def _pad_enum(self, pad, mode, value=None):
    nd = self.dim()
    pad = list(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) > nd * 2:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{nd}")
    if mode == 0:
        return _call("constant_pad_nd", self, pad, 0.0 if value is None else value)
    name = {1: "reflect", 2: "replicate", 3: "circular"}[mode]
    if value is not None and value != 0:
        raise RuntimeError(f"Padding mode \"{name}\" doesn't take in value argument")
    k = len(pad) // 2
    if k in (1, 2, 3) and nd in (k + 1, k + 2):
        op = {"reflect": "reflection_pad", "replicate": "replication_pad"}.get(name)
        if op is None:
            return _call("_pad_circular", self, pad)
        return _call(f"{op}{k}d", self, pad)
    raise NotImplementedError(
        f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
        "Supported combinations for non-constant padding:\n"
        "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
        "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
        "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


# ------------------------------------------------------------------------- searchsorted family
def _warn_noncontiguous(what: str, t: TensorBase) -> None:
    if t is not None and not t.is_contiguous():
        torch_warn_once(f"torch.searchsorted(): {what} tensor is non-contiguous, this will "
                        "lower the performance due to extra data copy when converting "
                        f"non-contiguous tensor to contiguous, please use contiguous {what} "
                        "tensor if possible. This message will only appear once per program.")


def _bsearch(bd: np.ndarray, vals: np.ndarray, right: bool) -> np.ndarray:
    """Upstream's lower/upper bound loop, vectorized over rows: ``bd`` (R, M), ``vals`` (R, K).
    Its comparisons (``!(mid >= v)`` / ``!(mid > v)``) decide where NaNs land."""
    rows, m = bd.shape
    lo = np.zeros(vals.shape, np.int64)
    hi = np.full(vals.shape, m, np.int64)
    r = np.arange(rows)[:, None]
    with np.errstate(invalid="ignore"):
        while True:
            active = lo < hi
            if not active.any():
                return lo
            mid = lo + ((hi - lo) >> 1)
            mv = bd[r, np.minimum(mid, m - 1)]
            go = ~(mv > vals) if right else ~(mv >= vals)
            lo = np.where(active & go, mid + 1, lo)
            hi = np.where(active & ~go, mid, hi)


def _searchsorted(boundaries, values, out_int32, right, side, sorter, scalar=None):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                               f"{side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    if boundaries.dim() == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if scalar is not None and boundaries.dim() != 1:
        raise RuntimeError(f"torch.searchsorted(): input value can be a scalar only when "
                           f"boundaries tensor dimension is 1, but we got boundaries tensor "
                           f"dim({boundaries.dim()}) and input value's dim(0) numel(1)")
    if scalar is None and boundaries.dim() != 1 and (
            boundaries.dim() != values.dim() or boundaries._size[:-1] != values._size[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or the "
                           f"first N-1 dimensions of boundaries tensor and input value tensor "
                           f"must match, but we got boundaries tensor "
                           f"{_shape_str(boundaries._size)} and input value tensor "
                           f"{_shape_str(values._size)}")
    if sorter is not None:
        if sorter._dtype._name != "int64":
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {_name(sorter._dtype)}")
        if sorter._size != boundaries._size:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same "
                               f"size, but got boundary tensor {_shape_str(boundaries._size)}and "
                               f"got sorter tensor {_shape_str(sorter._size)}")
        s = arr(sorter)
        if s.size and (s.min() < 0 or s.max() >= boundaries._size[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
    dt = result_type(boundaries, scalar if scalar is not None else values)
    if dt._name == "bool" or dt.is_complex:
        raise NotImplementedError(f"\"searchsorted_out_cpu\" not implemented for '{_name(dt)}'")
    if scalar is None:
        _warn_noncontiguous("input value", values)
    _warn_noncontiguous("boundary", boundaries)
    _warn_noncontiguous("sorter", sorter)
    bd = _in(boundaries, dt)
    if sorter is not None:
        bd = np.take_along_axis(bd, arr(sorter), axis=-1)
    if scalar is not None:
        v = np.asarray(scalar_to(scalar, dt)).reshape(1, 1)
        shape = ()
    else:
        v = _in(values, dt)
        shape = v.shape
    m = bd.shape[-1]
    odt = D.BY_NAME["int32"] if out_int32 else INT64
    if v.size == 0 or m == 0:  # nothing to search, or every value lands at 0
        return wrap(np.zeros(shape, D.numpy_dtype(odt)), odt)
    if bd.ndim == 1:
        res = _bsearch(bd.reshape(1, m), v.reshape(1, -1), right)
    else:
        res = _bsearch(bd.reshape(-1, m), v.reshape(bd.size // m, -1), right)
    return wrap(res.reshape(shape).astype(D.numpy_dtype(odt)), odt)


@kernel("searchsorted.Tensor")
def searchsorted_tensor(sorted_sequence, self, *, out_int32=False, right=False, side=None,
                        sorter=None):
    return _searchsorted(sorted_sequence, self, out_int32, right, side, sorter)


@kernel("searchsorted.Scalar")
def searchsorted_scalar(sorted_sequence, self, *, out_int32=False, right=False, side=None,
                        sorter=None):
    return _searchsorted(sorted_sequence, None, out_int32, right, side, sorter, scalar=self)


@kernel("bucketize.Tensor")
def bucketize_tensor(self, boundaries, *, out_int32=False, right=False):
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.dim()})")
    return _searchsorted(boundaries, self, out_int32, right, None, None)


@kernel("bucketize.Scalar")
def bucketize_scalar(self, boundaries, *, out_int32=False, right=False):
    if boundaries.dim() != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries.dim()})")
    return _searchsorted(boundaries, None, out_int32, right, None, None, scalar=self)
