"""Kernels for CompositeImplicitAutograd operators that upstream implements in C++ (so no Python
decomposition exists), written as upstream writes them: in terms of other operators, each called
through the door, so modes and autograd see those.

Aliases (``absolute`` -> ``abs``, ``divide`` -> ``div`` ...) are generated from one table, for
every overload the two operators share (functional, in-place and ``out=``).
"""

from __future__ import annotations

from ..core.tensor import contiguous_of, numel_of
from ..core.layouts import contiguous_format
from ..dispatch.call import call, convert_to
from ..ops.native_functions import by_qualname
from ..core.dtypes import is_integral
from ..core.tensor import wrap_dim
from ..ops.kernel_registry import COMPOSITE, kernel
from .views import compute_stride, infer_size
from .support.broadcast import broadcast_shape


def _call(name, *args, **kwargs):
    return call(name, *args, **kwargs)


# alias -> target, as upstream's C++ forwards them (functional, "_" in-place, and out forms).
# Pointwise aliases (absolute, divide, greater ...) live with the pointwise kernels.
ALIASES = {
    "concat": "cat", "concatenate": "cat", "moveaxis": "movedim", "swapaxes": "transpose",
    "swapdims": "transpose", "ger": "outer", "row_stack": "vstack", "trapz": "trapezoid",
}
_OVERLOAD_RENAMES = {("swapaxes", ""): "int", ("swapdims", ""): "int"}


def _register_aliases() -> None:
    table = by_qualname()
    for alias, target in ALIASES.items():
        for suffix in ("", "_"):
            a_ops = table.get(f"aten::{alias}{suffix}", {})
            t_ops = table.get(f"aten::{target}{suffix}", {})
            for overload in a_ops:
                t_over = _OVERLOAD_RENAMES.get((alias, overload), overload)
                if t_over not in t_ops:
                    continue
                name = f"{alias}{suffix}" + (f".{overload}" if overload else "")
                dest = f"{target}{suffix}" + (f".{t_over}" if t_over else "")
                if name not in COMPOSITE:
                    COMPOSITE[name] = _forward(dest)


def _forward(dest: str):
    def forward(*args, **kwargs):
        return _call(dest, *args, **kwargs)

    forward.__name__ = dest
    return forward


_register_aliases()


@kernel("reshape", composite=True)
def reshape(self, shape):
    if contiguous_of(self):
        return _call("view", self, shape)  # upstream passes the shape as given (-1 included)
    shape = infer_size(shape, numel_of(self))
    if compute_stride(self._size, self._stride, shape) is not None:
        return _call("view", self, shape)
    return _call("_unsafe_view", _call("clone", self, memory_format=contiguous_format), shape)


@kernel("reshape_as", composite=True)
def reshape_as(self, other):
    return reshape(self, list(other.shape))


@kernel("view_as", composite=True)
def view_as(self, other):
    return _call("view", self, list(other.shape))


@kernel("expand_as", composite=True)
def expand_as(self, other):
    return _call("expand", self, list(other.shape))


@kernel("type_as", composite=True)
def type_as(self, other):
    return self.to(other.dtype)


@kernel("flatten.using_ints", composite=True)
def flatten(self, start_dim=0, end_dim=-1):
    n = self.dim()
    if n == 0:
        return reshape(self, [1])
    s, e = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return self
    size = list(self.shape)
    merged = 1
    for d in size[s:e + 1]:
        merged *= d
    return reshape(self, size[:s] + [merged] + size[e + 1:])


@kernel("ravel", composite=True)
def ravel(self):
    return reshape(self.contiguous(), [-1])


@kernel("diagflat", composite=True)
def diagflat(self, offset=0):
    return _call("diag", _call("view", _call("contiguous", self), [-1]), offset)


@kernel("unflatten.int", composite=True)
def unflatten(self, dim, sizes):
    n = self.dim()
    d = wrap_dim(dim, n)
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        inferred = infer_size(sizes, self.shape[d])
    except RuntimeError as e:  # handle_unflatten_exception's messages
        if "is invalid for input of size" not in str(e):
            raise RuntimeError(f"unflatten got an unexpected error:\n{e}") from None
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {d} ({self.shape[d]}) in the input tensor") from None
    return _call("view", self, list(self.shape[:d]) + inferred + list(self.shape[d + 1:]))


def _movedim(self, src, dst):
    n = self.dim()
    given_src, given_dst = list(src), list(dst)  # the messages print the dims as given
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({given_src} dims) "
                           f"should contain the same number of dims as destination ({given_dst} dims)")
    src = [wrap_dim(s, n) for s in src]
    dst = [wrap_dim(d, n) for d in dst]
    if len(set(src)) != len(src):
        raise RuntimeError(f"movedim: repeated dim in `source` ({given_src})")
    if len(set(dst)) != len(dst):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({given_dst})")
    order = [-1] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    order = [o if o != -1 else next(rest) for o in order]
    return _call("permute", self, order)


@kernel("movedim.intlist", composite=True)
def movedim_list(self, source, destination):
    return _movedim(self, list(source), list(destination))


@kernel("movedim.int", composite=True)
def movedim_int(self, source, destination):
    return _movedim(self, [source], [destination])


@kernel("narrow", composite=True)
def narrow(self, dim, start, length):
    if self.dim() == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, self.dim())
    size = self.shape[d]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < -size or start > size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return _call("slice.Tensor", self, d, start, start + length, 1)


@kernel("narrow.Tensor", composite=True)
def narrow_tensor(self, dim, start, length):
    if start.dim() != 0 or not is_integral(start.dtype):  # bool is not integral here
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    return narrow(self, dim, int(start.item()), length)


def _chunk(self, chunks, dim, split, split_with_sizes):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    d = wrap_dim(dim, self.dim())
    size = self.shape[d]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        sizes = [split_size] * chunks
        sizes[-1] = split_size - (split_size * chunks - size)
        return _call(split_with_sizes, self, sizes, d)
    return _call(split, self, split_size, d)


@kernel("chunk", composite=True)
def chunk(self, chunks, dim=0):
    return _chunk(self, chunks, dim, "split.Tensor", "split_with_sizes")


@kernel("unsafe_chunk", composite=True)
def unsafe_chunk(self, chunks, dim=0):
    """Through unsafe_split, whose outputs are not views (autograd lets them be modified in
    place), as upstream's unsafe_chunk."""
    return _chunk(self, chunks, dim, "unsafe_split.Tensor", "unsafe_split_with_sizes")


@kernel("split.sizes", composite=True)
def split_sizes(self, split_size, dim=0):
    return _call("split_with_sizes", self, list(split_size), dim)


def _tensor_split_indices(self, indices, dim):
    d = wrap_dim(dim, self.dim())
    out, start = [], 0
    for idx in list(indices) + [self.shape[d]]:
        stop = max(min(idx, self.shape[d]), start) if idx >= 0 else max(idx + self.shape[d], start)
        out.append(_call("slice.Tensor", self, d, start, stop, 1))
        start = stop
    return out


@kernel("tensor_split.indices", composite=True)
def tensor_split_indices(self, indices, dim=0):
    return _tensor_split_indices(self, indices, dim)


@kernel("tensor_split.sections", composite=True)
def tensor_split_sections(self, sections, dim=0):
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    d = wrap_dim(dim, self.dim())
    size = self.shape[d]
    base, extra = divmod(size, sections)
    indices, acc = [], 0
    for i in range(sections - 1):
        acc += base + (1 if i < extra else 0)
        indices.append(acc)
    return _tensor_split_indices(self, indices, d)


@kernel("tensor_split.tensor_indices_or_sections", composite=True)
def tensor_split_tensor(self, tensor_indices_or_sections, dim=0):
    t = tensor_indices_or_sections
    if t.dim() == 0:
        return tensor_split_sections(self, int(t.item()), dim)
    return tensor_split_indices(self, [int(v) for v in t.tolist()], dim)


@kernel("broadcast_to", composite=True)
def broadcast_to(self, size):
    return _call("expand", self, list(size))


@kernel("broadcast_tensors", composite=True)
def broadcast_tensors(tensors):
    shape = list(broadcast_shape(*(t.shape for t in tensors)))
    # upstream's expand_size returns a tensor that already has the shape as it is
    return [t if list(t.shape) == shape else _call("expand", t, shape) for t in tensors]


def _atleast(self, n):
    while self.dim() < n:
        if n == 3 and self.dim() == 2:
            self = _call("unsqueeze", self, -1)
        else:
            self = _call("unsqueeze", self, 0)
    return self


@kernel("atleast_1d", composite=True)
def atleast_1d(self):
    return self if self.dim() >= 1 else reshape(self, [1])


@kernel("atleast_2d", composite=True)
def atleast_2d(self):
    return _atleast(self, 2)


@kernel("atleast_3d", composite=True)
def atleast_3d(self):
    if self.dim() == 0:
        return reshape(self, [1, 1, 1])
    if self.dim() == 1:
        return _call("unsqueeze", _call("unsqueeze", self, 0), -1)
    return _atleast(self, 3)


@kernel("contiguous", composite=True)
def contiguous(self, *, memory_format=contiguous_format):
    if self.is_contiguous(memory_format=memory_format):
        return self
    return _call("clone", self, memory_format=memory_format)


def _to(self, dtype=None, device=None, non_blocking=False, copy=False, memory_format=None):
    return convert_to(self, device, dtype, non_blocking, copy, memory_format)


@kernel("to.dtype", composite=True)
def to_dtype(self, dtype, non_blocking=False, copy=False, memory_format=None):
    return _to(self, dtype, None, non_blocking, copy, memory_format)


@kernel("to.device", composite=True)
def to_device(self, device, dtype, non_blocking=False, copy=False, memory_format=None):
    return _to(self, dtype, device, non_blocking, copy, memory_format)


@kernel("to.other", composite=True)
def to_other(self, other, non_blocking=False, copy=False, memory_format=None):
    return _to(self, other.dtype, other.device, non_blocking, copy, memory_format)


@kernel("to.dtype_layout", composite=True)
def to_dtype_layout(self, *, dtype=None, layout=None, device=None, pin_memory=None,
                    non_blocking=False, copy=False, memory_format=None):
    return _to(self, dtype, device, non_blocking, copy, memory_format)


@kernel("to_dense", composite=True)
def to_dense(self, dtype=None, *, masked_grad=None):
    """A strided tensor is already dense: itself, or converted to ``dtype`` (upstream's
    TensorConversions.cpp; there are no sparse or mkldnn layouts here to densify)."""
    return self if dtype is None else _to(self, dtype)


@kernel("square", composite=True)
def square(self):
    return _call("pow.Tensor_Scalar", self, 2)


@kernel("positive", composite=True)
def positive(self):
    if self.dtype.__reduce__() == "bool":
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


@kernel("adjoint", "mH", "matrix_H", composite=True)
def adjoint(self):
    t = _call("transpose.int", self, -2, -1)
    return _call("conj", t) if self.dtype.is_complex else t


@kernel("mT", composite=True)
def mT(self):
    return _call("transpose.int", self, -2, -1)


@kernel("numpy_T", composite=True)
def numpy_T(self):
    return _call("permute", self, list(range(self.dim() - 1, -1, -1)))


@kernel("sum_to_size", composite=True)
def sum_to_size(self, size):
    size = list(size)
    shape = list(self.shape)
    if len(size) > len(shape) or any(s != t and s != 1 for s, t in zip(size[::-1], shape[::-1])):
        raise RuntimeError(f"size {{{size}}} is not expandable to size {{{shape}}}.")
    if not size:  # sum_to: an empty shape is a full sum, a new tensor even of a 0-dim one
        return _call("sum", self)
    lead = self.dim() - len(size)
    dims = list(range(lead)) + [lead + i for i, s in enumerate(size)
                                if s == 1 and self.shape[lead + i] != 1]
    out = _call("sum.dim_IntList", self, dims, True) if dims else self
    return _call("view", out, size) if lead else out


@kernel("size.int", composite=True)
def size_int(self, dim):
    return self.size(dim)


@kernel("stride.int", composite=True)
def stride_int(self, dim):
    return self.stride(dim)


@kernel("storage_offset", composite=True)
def storage_offset(self):
    return self.storage_offset()


@kernel("numel", composite=True)
def numel(self):
    return self.numel()


@kernel("dim", composite=True)
def dim(self):
    return self.dim()


# var/std(_mean) with ``unbiased``: upstream forwards to the ``correction`` overloads
def _correction_forward(name: str):
    def default(self, unbiased=True):
        return _call(f"{name}.correction", self, None, correction=1 if unbiased else 0,
                     keepdim=False)

    def dim(self, dim, unbiased=True, keepdim=False):
        return _call(f"{name}.correction", self, dim, correction=1 if unbiased else 0,
                     keepdim=keepdim)

    kernel(name, composite=True)(default)
    kernel(f"{name}.dim", composite=True)(dim)


for _name in ("var", "std", "var_mean", "std_mean"):
    _correction_forward(_name)


@kernel("var.out", composite=True)
def var_out(self, dim, unbiased=True, keepdim=False, *, out):
    return _call("var.correction_out", self, dim, correction=1 if unbiased else 0,
                 keepdim=keepdim, out=out)


@kernel("std.out", composite=True)
def std_out(self, dim, unbiased=True, keepdim=False, *, out):
    return _call("std.correction_out", self, dim, correction=1 if unbiased else 0,
                 keepdim=keepdim, out=out)


# Activation.cpp's composites: SELU as ELU with its two constants, ReLU6 as hardtanh(0, 6)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@kernel("selu", composite=True)
def selu(self):
    return call("elu", self, _SELU_ALPHA, _SELU_SCALE)


@kernel("selu_", composite=True)
def selu_(self):
    return call("elu_", self, _SELU_ALPHA, _SELU_SCALE)


@kernel("relu6", composite=True)
def relu6(self):
    return call("hardtanh", self, 0, 6)


@kernel("relu6_", composite=True)
def relu6_(self):
    return call("hardtanh_", self, 0, 6)
