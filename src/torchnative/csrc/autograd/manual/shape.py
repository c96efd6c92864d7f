"""FunctionsManual.cpp helpers for shape, view, indexing and concatenation operators."""

from __future__ import annotations

import math

from ...core.grad_mode import TLS as _GRAD
from ..cpp_shims import INT64_MAX, _dims, _torch, maybe_wrap_dim, not_implemented


def to_args_sizes(tensors):
    return [tuple(t._size) for t in tensors]


to_args_sizes_symint = to_args_sizes


def to_args_scalartypes(tensors):
    return [t._dtype for t in tensors]


def cat_tensors_backward(grad, sizes, dtypes, dim):
    torch = _torch()
    out = [None] * len(sizes)
    if grad is None:
        return out
    ndim = next((len(s) for s in sizes if not (len(s) == 1 and s[0] == 0)), 1)
    dim = maybe_wrap_dim(dim, ndim)
    acc = 0
    for i, shape in enumerate(sizes):
        g = torch.real(grad) if grad._dtype.is_complex and not dtypes[i].is_complex else grad
        if len(shape) == 1 and shape[0] == 0:
            out[i] = torch.zeros((0,), dtype=g.dtype)
            continue
        size = shape[dim]
        acc += size
        out[i] = g.narrow(dim, acc - size, size)
    return out


def block_diag_backward(grad, sizes, dtypes):
    """Each input's block of the gradient: a slice of it (squeezed back for 1-d and 0-d inputs),
    its real part for a real input of a complex result."""
    out = [None] * len(sizes)
    if grad is None:
        return out
    real = _torch().real(grad) if grad._dtype.is_complex else None
    row = col = 0
    for i, shape in enumerate(sizes):
        g = real if real is not None and not dtypes[i].is_complex else grad
        if len(shape) == 1 and shape[0] == 0:
            out[i] = _torch().zeros((0,), dtype=g.dtype)
            continue
        rows, cols = shape if len(shape) == 2 else (1, shape[0] if shape else 1)
        block = g.narrow(0, row, rows).narrow(1, col, cols)
        if len(shape) == 1:
            block = block.squeeze(-1)
        elif not shape:
            block = block.squeeze(-1).squeeze(-1)
        out[i] = block
        row, col = row + rows, col + cols
    return out


def stack_tensors_backward(grad, dim, dtypes):
    torch = _torch()
    out = [None] * len(dtypes)
    if grad is None:
        return out
    for i, dt in enumerate(dtypes):
        g = grad.select(dim, i)
        if grad._dtype.is_complex and not dt.is_complex:
            g = torch.real(g)
        out[i] = g
    return out


def permute_backwards(grad, fwd_dims):
    n = len(fwd_dims)
    dims = [0] * n
    for i, d in enumerate(fwd_dims):
        dims[maybe_wrap_dim(d, n)] = i
    return grad.permute(dims)


def unsqueeze_to(t, *args):
    if len(args) == 1:
        sizes = args[0]
        for d, s in enumerate(sizes):
            if s == 1:
                t = t.unsqueeze(d)
        return t
    dim, sizes = args
    if len(sizes) == 0:  # a 0-dim input: nothing was squeezed
        return t
    if isinstance(dim, int):
        d = maybe_wrap_dim(dim, len(sizes))
        return t.unsqueeze(d) if sizes[d] == 1 else t
    mask = set(_dims(dim, len(sizes)))
    for d in range(len(sizes)):
        if d in mask and sizes[d] == 1:
            t = t.unsqueeze(d)
    return t


def slice_backward_wrapper(grad, sizes, dim, start, end, step):
    torch = _torch()
    return torch.ops.aten.slice_backward(grad, list(sizes), dim,
                                         0 if start is None else start,
                                         INT64_MAX if end is None else end, step)


def index_backward(zeros_like_self, indices, grad):
    return _torch().ops.aten._index_put_impl_(zeros_like_self, list(indices), grad, True, True) \
        if not _GRAD.grad_enabled else zeros_like_self.index_put(list(indices), grad, True)


def gather_backward(grad, self, dim, index, sparse_grad):
    return grad.new_zeros(self.shape).scatter_add(dim, index, grad)


def split_backward(grads, split_size, dim, sizes, options):
    dim = maybe_wrap_dim(dim, len(sizes))
    dim_size = sizes[dim]
    num_splits = max((dim_size + split_size - 1) // split_size, 1)
    split_sizes = [split_size] * num_splits
    split_sizes[-1] = split_size - (split_size * num_splits - dim_size)
    return split_with_sizes_backward(grads, split_sizes, dim, sizes, options)


split_backward_symint = split_backward


def split_with_sizes_backward(grads, split_sizes, dim, sizes, options):
    torch = _torch()
    dim = maybe_wrap_dim(dim, len(sizes))
    filled = []
    for j, g in enumerate(grads):
        if g is not None:
            filled.append(g)
        else:
            shape = list(sizes)
            shape[dim] = split_sizes[j]
            filled.append(torch.zeros(shape, **options.kw()))
    return torch.cat(filled, dim)


split_with_sizes_backward_symint = split_with_sizes_backward


def unbind_backward(grads, dim):
    torch = _torch()
    sizes, o = None, None
    for g in grads:
        if g is not None:
            sizes, o = list(g.shape), g
            break
    filled = [g if g is not None else torch.zeros(sizes, dtype=o.dtype) for g in grads]
    return torch.stack(filled, dim)


def unbind_backward_nested(*a):
    not_implemented("unbind (nested)")


def index_select_backward(grad, self_sizes, dim, index):
    torch = _torch()
    return torch.zeros(list(self_sizes), dtype=grad.dtype).index_add(dim, index, grad)


index_select_backward_symint = index_select_backward


def expand_as_backward(*a):
    not_implemented("expand_as")


def repeat_backward(grad, repeats, input_shape):
    torch = _torch()
    if 0 in list(repeats):  # as upstream: fresh zeros, no graph through the gradient
        return torch.zeros(list(input_shape), dtype=grad.dtype, device=grad.device)
    n = len(input_shape)
    num_unsqueezed = len(repeats) - n
    for _ in range(num_unsqueezed):
        grad = grad.sum(0, False)
    sizes = []
    sum_dims = []
    for j in range(n):
        r = repeats[j + num_unsqueezed]
        sizes.extend([r, input_shape[j]])
        sum_dims.append(2 * j)
    grad = grad.reshape(sizes)
    return grad.sum(sum_dims)


def to_dense_backward(grad, input, masked=None):
    return grad


def constant_pad_nd_backward(grad, pad):
    return _torch().constant_pad_nd(grad, [-p for p in pad])


def diag_embed_backward(*a):
    not_implemented("diag_embed")


def expand_symint(*a):
    raise NotImplementedError


def masked_select_backward(grad, input, mask):
    """The selected elements' gradients scattered back, over input broadcast against mask."""
    torch = _torch()
    shape = torch.broadcast_shapes(tuple(input.shape), tuple(mask.shape))
    return torch.zeros_like(input.expand(shape)).masked_scatter(mask, grad)


def masked_scatter_backward(grad, mask, sizes):
    torch = _torch()
    mask_selected = grad.masked_select(mask)
    diff_nelem = math.prod(sizes) - mask_selected.numel()  # source may hold more than is used
    if diff_nelem > 0:
        zeros_fill = torch.zeros(diff_nelem, dtype=grad.dtype)
        mask_selected = torch.cat([mask_selected, zeros_fill], 0)
    return mask_selected.view(list(sizes))


masked_scatter_backward_symint = masked_scatter_backward


def as_strided_backward(grad, input_geometry, sizes, strides, storage_offset):
    """The gradient of as_strided: scatter-add the view's gradient into a flat storage image,
    then read the input's geometry out of it (overlapping views accumulate)."""
    torch = _torch()
    g = input_geometry
    off = g.offset if storage_offset is None else storage_offset
    extent = max(g.offset + sum((n - 1) * st for n, st in zip(g.sizes, g.strides) if n > 0),
                 off + sum((n - 1) * st for n, st in zip(sizes, strides) if n > 0)) + 1
    idx = torch.full(list(sizes), off, dtype=torch.int64)
    for d, (n, st) in enumerate(zip(sizes, strides)):
        shape = [1] * len(sizes)
        shape[d] = n
        idx = idx + (torch.arange(n, dtype=torch.int64) * st).reshape(shape)
    flat = torch.zeros(extent, dtype=grad.dtype).index_add(0, idx.reshape(-1), grad.reshape(-1))
    return flat.as_strided(list(g.sizes), list(g.strides), g.offset)


as_strided_backward_symint = as_strided_backward


def take_backward(grad, self, indices):
    return _torch().zeros_like(self).put_(indices, grad, True)
