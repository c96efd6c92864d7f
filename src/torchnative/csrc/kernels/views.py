"""View operators: new geometry over the same storage, as upstream computes it.

A view shares its base's storage and version counter and records its base (``_base``).
These kernels only compute sizes, strides and offsets, so they serve meta tensors too.
"""

from __future__ import annotations

from ..core import construct
from ..core.conj_neg_bits import CONJ, NEG, set_bits
from ..core.construct import _CONTIGUOUS, contiguous_strides_of, make
from ..core.creation_meta import creation_now, note_view
from ..core.python_classes import TENSOR as _TENSOR_CLASS_LIST
from ..core.size import Size
from ..core.tensor import TensorBase, wrap_dim
from ..ops.kernel_registry import kernel


def view_of(base: TensorBase, size, stride, offset, dtype=None, np_view=None,
            multi_output: bool = False) -> TensorBase:
    """A view of ``base`` (upstream's as_view): same storage and version counter, its root base
    recorded, and the mode it was made in stamped for autograd's view+in-place rules."""
    root = base._view_base
    storage = base._st
    if storage is None:
        storage = base._storage  # a fresh result's storage, made on first use
    if np_view is None or not _TENSOR_CLASS_LIST:
        out = make(storage, dtype or base._dtype, size, stride, offset, None,
                   base._version_ref, base if root is None else root, np_view)
        # views of inference tensors are inference tensors; a view of a normal tensor made in
        # inference mode is normal
        out._tn_inference = base._tn_inference
        if base._math_bits:
            set_bits(out, base._math_bits)  # a view of a lazily conjugated/negated tensor too
        note_view(out, base, multi_output)
        return out
    # the common case (the kernel's own numpy view): make's fields set inline, and note_view's
    # stamp without its frame (every view pays for these calls otherwise)
    out = _new(_TENSOR_CLASS_LIST[0])
    out._st = storage
    out._dtype = dtype or base._dtype
    out._size = size if type(size) is tuple else tuple(size)
    out._stride = stride if type(stride) is tuple else tuple(stride)
    out._offset = offset
    out._np = np_view
    out._version_ref = version = base._version_ref
    out._requires_grad = False
    out._grad = None
    out._grad_fn = None
    out._view_base = base if root is None else root
    out._retains_grad = False
    out._output_nr = 0
    out._wrapped = False
    out._tn_inference = base._tn_inference  # views of inference tensors are inference tensors
    # a view of a lazily conjugated/negated tensor is one too (the bits' LIVE flag went up when
    # the base got them)
    out._math_bits = base._math_bits
    out._tn_view = [version[0], creation_now(multi_output,
                                             None if root is None else base._tn_view)]
    return out


_new = object.__new__


def infer_size(shape, numel: int) -> list[int]:
    shape = [int(s) for s in shape]
    infer = []
    known = 1
    for i, s in enumerate(shape):  # (upstream's checks in its walk's order)
        if s == -1:
            if infer:
                raise RuntimeError("only one dimension can be inferred")
            infer.append(i)
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {shape}")
        else:
            known *= s
    if infer:
        if known == 0 and numel == 0:  # any size fits the -1: upstream names the ambiguity
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {shape} because the "
                               "unspecified dimension size -1 can be any value and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[infer[0]] = numel // known
    elif known != numel:
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
    return shape


def compute_stride(oldshape, oldstride, newshape):
    """Strides for viewing (oldshape, oldstride) as newshape, or None (at::detail::computeStride)."""
    if not oldshape:
        return [1] * len(newshape)
    numel = 1
    for s in oldshape:
        numel *= s
    if numel == 0 and list(oldshape) == list(newshape):
        return list(oldstride)
    newstride = [0] * len(newshape)
    if numel == 0:
        for view_d in range(len(newshape) - 1, -1, -1):
            if view_d == len(newshape) - 1:
                newstride[view_d] = 1
            else:
                newstride[view_d] = max(newshape[view_d + 1], 1) * newstride[view_d + 1]
        return newstride
    view_d = len(newshape) - 1
    chunk_base_stride = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for tensor_d in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[tensor_d]
        if tensor_d == 0 or (oldshape[tensor_d - 1] != 1 and
                             oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base_stride
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if tensor_d > 0:
                chunk_base_stride = oldstride[tensor_d - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return newstride


def view_geometry(self, size) -> tuple:
    """(sizes, strides) of ``self`` viewed as ``size`` (a ``-1`` inferred), the strides None
    where no view exists (``reshape`` copies then, ``view`` refuses); an invalid size raises
    infer_size's error. Plain-int sizes are memoized: a model views the same few geometries
    every step (``view(*shape, -1, head_dim)``, ``reshape(*shape, -1)``)."""
    key = (self._size, self._stride, tuple(size))
    for s in key[2]:
        if type(s) is not int:
            key = None  # sizes given as tensors or symbols: parsed every time
            break
    else:
        geometry = _VIEW_GEOMETRY.get(key)
        if geometry is not None:
            return geometry
    shape = infer_size(size, self.numel())
    stride = compute_stride(self._size, self._stride, shape)
    geometry = (tuple(shape), None if stride is None else tuple(stride))
    if key is not None:
        if len(_VIEW_GEOMETRY) >= 4096:
            _VIEW_GEOMETRY.clear()
        _VIEW_GEOMETRY[key] = geometry
    return geometry


def view_as_geometry(self, shape: tuple, stride: tuple) -> TensorBase:
    """The view of ``self`` with a geometry ``view_geometry`` found; over a contiguous dense
    base numpy reshapes it without a copy."""
    npa = self._np
    if npa is not None and npa.size and self._stride == (
            _CONTIGUOUS.get(self._size) or contiguous_strides_of(self._size)):
        return view_of(self, shape, stride, self._offset, None, npa.reshape(shape))
    return view_of(self, shape, stride, self._offset)


@kernel("view", meta=True)
def view(self, size):
    npa = self._np
    if npa is not None and npa.size and self._stride == (
            _CONTIGUOUS.get(self._size) or contiguous_strides_of(self._size)):
        # a contiguous dense base: the view is contiguous too, and numpy reshapes without a copy;
        # taken for plain non-negative ints whose product is the size (``-1`` and the rest are
        # parsed below)
        shape = tuple(size)
        n = 1
        for s in shape:
            if type(s) is not int or s < 0:
                n = -1
                break
            n *= s
        if n == npa.size:
            return view_of(self, shape, _CONTIGUOUS.get(shape) or contiguous_strides_of(shape),
                           self._offset, None, npa.reshape(shape))
    shape, stride = view_geometry(self, size)
    if stride is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.")
    return view_as_geometry(self, shape, stride)


# (sizes, strides, requested size) -> (sizes, strides or None): see view_geometry
_VIEW_GEOMETRY: dict = {}


@kernel("_unsafe_view", meta=True)
def _unsafe_view(self, size):
    out = view(self, size)
    out._view_base = None
    return out


@kernel("_reshape_alias", meta=True)
def _reshape_alias(self, size, stride):
    return view_of(self, size, stride, self._offset)


@kernel("as_strided", meta=True)
def as_strided(self, size, stride, storage_offset=None):
    off = self._offset if storage_offset is None else storage_offset
    _check_strided(self, list(size), list(stride), off)
    return view_of(self, size, stride, off)


def _check_strided(self, size: list, stride: list, offset: int) -> None:
    """setStrided's checks: matching lengths, no negative stride, the extent inside the storage
    (checkInBoundsForStorage; a meta or fake tensor's storage, or symbolic sizes, are not checked),
    a non-negative offset."""
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError("as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {stride}")
    for n in size:
        if n == 0:
            break
        if n < 0:  # computeStorageNbytes's unsigned arithmetic overflows
            raise RuntimeError(f"Storage size calculation overflowed with sizes={size} and "
                               f"strides={stride}")
    item = self._dtype.itemsize
    extent = construct.storage_extent(size, stride)
    storage = self._storage
    if extent and storage.device.type != "meta" and \
            all(type(v) is int for v in (*size, *stride, offset)):
        need = (extent + offset) * item
        have = storage.nbytes()
        if need > have:
            raise RuntimeError(f"setStorage: sizes {size}, strides {stride}, storage offset "
                               f"{offset}, and itemsize {item} requiring a storage size of "
                               f"{need} are out of bounds for storage of size {have}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")


@kernel("detach", meta=True)
def detach(self):
    """A new tensor over the same storage sharing the version counter, not a view (upstream's
    detach records no base); autograd's manual entry drops the history."""
    return construct.alias(self, construct._tensor_class())


@kernel("alias", meta=True)
def alias(self):
    return view_of(self, self._size, self._stride, self._offset)


@kernel("transpose.int", meta=True)
def transpose(self, dim0, dim1):
    n = len(self._size)
    if n == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return alias(self)
    if -n <= dim0 < n and -n <= dim1 < n:  # wrap_dim's test, without its calls
        d0 = dim0 + n if dim0 < 0 else dim0
        d1 = dim1 + n if dim1 < 0 else dim1
    else:
        d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    size, stride = list(self._size), list(self._stride)
    size[d0], size[d1] = size[d1], size[d0]
    stride[d0], stride[d1] = stride[d1], stride[d0]
    npa = self._np
    if npa is not None and npa.size:
        return view_of(self, size, stride, self._offset, None, npa.swapaxes(d0, d1))
    return view_of(self, size, stride, self._offset)


@kernel("t", meta=True)
def t(self):
    if len(self._size) > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{len(self._size)}D")
    return transpose(self, 0, 1) if len(self._size) == 2 else alias(self)


@kernel("permute", meta=True)
def permute(self, dims):
    n = len(self._size)
    if len(dims) != n:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not "
                           "match the length of the desired ordering of dimensions i.e. input.dim()"
                           f" = {n} is not equal to len(dims) = {len(dims)}")
    wrapped = [wrap_dim(d, n) for d in dims]
    if len(set(wrapped)) != n:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return view_of(self, [self._size[d] for d in wrapped], [self._stride[d] for d in wrapped],
                   self._offset)


@kernel("expand", meta=True)
def expand(self, size, *, implicit=False):
    size = list(size)
    n_new, n_old = len(size), len(self._size)
    if n_new < n_old:
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(self._size)}}}, size={size}): the "
                           "number of sizes provided ({n_new}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({n_old})".replace("{n_new}",
                                                                                   str(n_new)))
    out_size, out_stride = [], []
    for i in range(n_new - 1, -1, -1):
        offset = n_new - 1 - i
        dim = n_old - 1 - offset
        s = self._size[dim] if dim >= 0 else 1
        st = self._stride[dim] if dim >= 0 else (out_size[0] * out_stride[0] if out_size else 1)
        target = size[i]
        if target == -1:
            if dim < 0:
                raise RuntimeError("The expanded size of the tensor (-1) isn't allowed in a "
                                   "leading, non-existing dimension " + str(i))
            target = s
        if s != target:
            if s != 1:
                raise RuntimeError(f"The expanded size of the tensor ({target}) must match the "
                                   f"existing size ({s}) at non-singleton dimension {i}.  Target "
                                   f"sizes: {size}.  Tensor sizes: {list(self._size)}")
            st = 0
        out_size.insert(0, target)
        out_stride.insert(0, st)
    return view_of(self, out_size, out_stride, self._offset)


@kernel("select.int", meta=True)
def select(self, dim, index):
    n = len(self._size)
    if n == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = dim if type(dim) is int and 0 <= dim < n else wrap_dim(dim, n)
    size = self._size[d]
    if index < -size or index >= size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(self._size)} at dimension {dim}")
    if index < 0:
        index += size
    npa = self._np
    if npa is not None and npa.size and type(index) is int:
        # numpy's own view of the same elements (cheaper than building it over the storage);
        # ``...`` keeps a 1-d tensor's element a 0-d array
        np_view = npa[index, ...] if d == 0 else npa[(_ALL,) * d + (index,)]
    else:
        np_view = None
    return view_of(self, self._size[:d] + self._size[d + 1:],
                   self._stride[:d] + self._stride[d + 1:],
                   self._offset + index * self._stride[d], None, np_view)


_ALL = slice(None)


@kernel("slice.Tensor", meta=True)
def slice_(self, dim=0, start=None, end=None, step=1):
    n = len(self._size)
    if n == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = dim if type(dim) is int and 0 <= dim < n else wrap_dim(dim, n)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    size = self._size[d]
    start = 0 if start is None else start
    end = size if end is None else end
    if start < 0:
        start += size
    if end < 0:
        end += size
    npa = self._np
    if type(start) is int and type(end) is int and type(size) is int and type(step) is int:
        # min/max's clamps as comparisons (a symbolic bound keeps the calls below)
        if start < 0:
            start = 0
        elif start > size:
            start = size
        if end < start:
            end = start
        elif end > size:
            end = size
    else:
        start = min(max(start, 0), size)
        end = min(max(end, start), size)
        npa = None
    length = (end - start + step - 1) // step
    sizes, strides = list(self._size), list(self._stride)
    sizes[d] = length
    strides[d] = self._stride[d] * step
    if npa is not None and length and npa.size:
        # numpy's own view of the same elements (an empty result keeps numpy_view's own array)
        np_view = npa[(_ALL,) * d + (slice(start, end, step),)]
    else:
        np_view = None
    return view_of(self, sizes, strides, self._offset + start * self._stride[d], None, np_view)


@kernel("unsqueeze", meta=True)
def unsqueeze(self, dim):
    n = len(self._size)
    d = wrap_dim(dim, n + 1)
    sizes, strides = list(self._size), list(self._stride)
    new_stride = sizes[d] * strides[d] if d < n else 1
    sizes.insert(d, 1)
    strides.insert(d, new_stride)
    return view_of(self, sizes, strides, self._offset)


def _squeeze_dims(self, dims):
    keep = [i for i in range(len(self._size)) if not (i in dims and self._size[i] == 1)]
    return view_of(self, [self._size[i] for i in keep], [self._stride[i] for i in keep],
                   self._offset)


@kernel("squeeze", meta=True)
def squeeze(self):
    return _squeeze_dims(self, set(range(len(self._size))))


@kernel("squeeze.dim", meta=True)
def squeeze_dim(self, dim):
    return _squeeze_dims(self, {wrap_dim(dim, len(self._size))} if len(self._size) else set())


@kernel("squeeze.dims", meta=True)
def squeeze_dims(self, dim):
    nd = len(self._size)
    return _squeeze_dims(self, {wrap_dim(d, nd) for d in dim} if nd else set())


@kernel("diagonal", meta=True)
def diagonal(self, offset=0, dim1=0, dim2=1):
    n = len(self._size)
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    storage_offset = self._offset
    if offset >= 0:
        diag = max(min(self._size[d1], self._size[d2] - offset), 0)
        if diag:
            storage_offset += offset * self._stride[d2]
    else:
        diag = max(min(self._size[d1] + offset, self._size[d2]), 0)
        if diag:
            storage_offset -= offset * self._stride[d1]
    sizes = [s for i, s in enumerate(self._size) if i not in (d1, d2)] + [diag]
    strides = [s for i, s in enumerate(self._stride) if i not in (d1, d2)] + \
        [self._stride[d1] + self._stride[d2]]
    return view_of(self, sizes, strides, storage_offset)


@kernel("unfold", meta=True)
def unfold(self, dimension, size, step):
    n = len(self._size)
    d = wrap_dim(dimension, n) if n else 0
    max_size = self._size[d] if n else 1
    if size > max_size:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {max_size} but size is "
                           f"{size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    sizes = list(self._size) + [size]
    strides = list(self._stride) + [self._stride[d] if n else 1]
    if n:
        sizes[d] = (self._size[d] - size) // step + 1
        strides[d] = step * self._stride[d]
    return view_of(self, sizes, strides, self._offset)


@kernel("split.Tensor", meta=True)
def split(self, split_size, dim=0):
    d = wrap_dim(dim, len(self._size))
    length = self._size[d]
    if split_size == 0 and length != 0:
        raise RuntimeError("split_size can only be 0 if dimension size is 0, but got dimension "
                           f"size of {length}")
    chunks = max((length + split_size - 1) // split_size, 1) if split_size else 1
    return _multi_output(self, [slice_(self, d, i * split_size, min((i + 1) * split_size, length))
                                for i in range(chunks)])


def _multi_output(base, views: list) -> list:
    """Views one call returns together: in-place on them is refused as upstream refuses it."""
    for v in views:
        note_view(v, base, multi_output=True)
    return views


@kernel("split_with_sizes", meta=True)
def split_with_sizes(self, split_sizes, dim=0):
    d = wrap_dim(dim, len(self._size))
    if sum(split_sizes) != self._size[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                           f"{self._size[d]} (input tensor's size at dimension {d}), but got "
                           f"split_sizes={list(split_sizes)}")
    out, start = [], 0
    for s in split_sizes:
        out.append(slice_(self, d, start, start + s))
        start += s
    return _multi_output(self, out)


@kernel("unbind.int", meta=True)
def unbind(self, dim=0):
    d = wrap_dim(dim, len(self._size))
    if len(self._size) == 0:
        raise IndexError(f"Dimension specified as {d} but tensor has no dimensions")
    return _multi_output(self, [select(self, d, i) for i in range(self._size[d])])


@kernel("view_as_real", meta=True)
def view_as_real(self):
    if not self.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if self._math_bits & CONJ:
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To "
                           "resolve the conjugate tensor so you can view it as real, use "
                           "self.resolve_conj(); however, be warned that the resulting tensor "
                           "will NOT alias the original.")
    real = self.dtype.to_real()
    return view_of(self, list(self._size) + [2], [s * 2 for s in self._stride] + [1],
                   self._offset * 2, dtype=real)


@kernel("view_as_complex", meta=True)
def view_as_complex(self):
    # upstream's checks, in its order (ComplexHelper.h)
    if self._dtype._name not in ("float16", "float32", "float64"):
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           f"tensors, but got a tensor of scalar type: {self._dtype._cpp_name}")
    if not self._size:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if self._size[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if self._stride[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in self._stride[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if self._offset % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    comp = self.dtype.to_complex()
    return view_of(self, self._size[:-1], [s // 2 for s in self._stride[:-1]],
                   self._offset // 2, dtype=comp)


def _not_differentiable(view: TensorBase) -> TensorBase:
    """make_variable_non_differentiable_view: the storage and version counter shared, but no
    base recorded (``_base`` is None), so autograd's view rules do not apply to it."""
    view._view_base = None
    view._tn_view = None
    return view


@kernel("view.dtype", meta=True)
def view_dtype(self, dtype):
    return _not_differentiable(_view_dtype(self, dtype))


def _view_dtype(self, dtype):
    if dtype == self.dtype:
        return alias(self)
    if self._math_bits & CONJ:
        raise RuntimeError("torch.Tensor.view is not supported for conjugate view tensors when "
                           "converting to a different dtype.")
    if self._math_bits & NEG:
        raise RuntimeError("torch.Tensor.view is not supported for tensors with negative bit "
                           "set when converting to a different dtype.")
    a, b = self.dtype.itemsize, dtype.itemsize
    if a == b:
        return view_of(self, self._size, self._stride, self._offset, dtype=dtype)
    names = f"{self.dtype._cpp_name} as {dtype._cpp_name} (different element sizes)"
    if not self._size:
        raise RuntimeError(f"self.dim() cannot be 0 to view {names}")
    if self._stride[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 to view {names}, but got "
                           f"{self._stride[-1]}")
    if a > b:
        r = a // b
        return view_of(self, list(self._size[:-1]) + [self._size[-1] * r],
                       [s * r for s in self._stride[:-1]] + [1], self._offset * r, dtype=dtype)
    r = b // a
    if self._size[-1] % r or self._offset % r:
        raise RuntimeError(f"self.size(-1) must be divisible by {r} to view {names}, but got "
                           f"{self._size[-1]}")
    return view_of(self, list(self._size[:-1]) + [self._size[-1] // r],
                   [s // r for s in self._stride[:-1]] + [1], self._offset // r, dtype=dtype)


del Size


# --- in-place view operators: they change self's own geometry ------------------------------------

def _restride(self, view: TensorBase) -> TensorBase:
    from ..core.tensor import numpy_view

    self._size, self._stride, self._offset = view._size, view._stride, view._offset
    self._np = numpy_view(self._storage, self._dtype, self._size, self._stride, self._offset)
    return self


@kernel("squeeze_", meta=True)
def squeeze_(self):
    return _restride(self, squeeze(self))


@kernel("squeeze_.dim", meta=True)
def squeeze_dim_(self, dim):
    return _restride(self, squeeze_dim(self, dim))


@kernel("squeeze_.dims", meta=True)
def squeeze_dims_(self, dim):
    return _restride(self, squeeze_dims(self, dim))


@kernel("unsqueeze_", meta=True)
def unsqueeze_(self, dim):
    return _restride(self, unsqueeze(self, dim))


@kernel("transpose_", meta=True)
def transpose_(self, dim0, dim1):
    return _restride(self, transpose(self, dim0, dim1))


@kernel("t_", meta=True)
def t_(self):
    return _restride(self, t(self))


@kernel("as_strided_", meta=True)
def as_strided_(self, size, stride, storage_offset=None):
    return _restride(self, as_strided(self, size, stride, storage_offset))
