"""The dims a reduction covers: wrapping and checking ``dim`` arguments, the reduced shape.
Below reduction.py so that the planned kernels beside it can use them without a cycle."""

from __future__ import annotations

from ..core.tensor import TensorBase, wrap_dim


def dim_list(dim) -> list:
    if dim is None:
        return []
    if isinstance(dim, int):
        return [dim]
    return list(dim)


def check_ndim(t: TensorBase) -> None:
    """TensorIterator's limit (numpy's is the same 64, but it raises ValueError)."""
    if len(t._size) > 64:
        raise RuntimeError("only tensors with up to 64 dims are supported")


def reduce_axes(t: TensorBase, dim, empty_means_all: bool = True) -> tuple:
    """The numpy axes a reduction over ``dim`` covers (wrapped, checked, sorted).

    ``None`` reduces everything; so does ``[]`` unless ``empty_means_all`` is False (any/all.dims).
    A 0-dim tensor accepts dims 0 and -1 and reduces nothing numpy-wise.
    """
    nd = t.dim()
    check_ndim(t)
    if dim is None:
        return tuple(range(nd))
    dims = dim_list(dim)
    if not dims:
        return tuple(range(nd)) if empty_means_all else ()
    seen = []
    for d in dims:
        w = wrap_dim(d, nd)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    return tuple(sorted(seen)) if nd else ()


def reduced_numel(t: TensorBase, axes) -> int:
    n = 1
    for a in axes:
        n *= t._size[a]
    return n


def reduced_shape(shape, axes, keepdim: bool) -> tuple:
    if keepdim:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)
