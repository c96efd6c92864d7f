"""In-place and ``out=`` overloads from a functional kernel, as upstream's structured kernels.

``add_(self, other)`` computes ``add(self, other)`` and writes it into ``self``; ``add.out``
writes it into ``out``, resizing an ``out`` of the wrong shape (with upstream's warning when it
had elements). Both check that the result dtype can be cast to the destination's, with
upstream's message.
"""

from __future__ import annotations

import warnings

from .promotion import can_cast
from .tensor import TensorBase


def _check_cast(result_dtype, dest: TensorBase) -> None:
    if not can_cast(result_dtype, dest.dtype):
        raise RuntimeError(f"result type {result_dtype._cpp_name} can't be cast to the desired "
                           f"output type {dest.dtype._cpp_name}")


def write_into(dest: TensorBase, result: TensorBase) -> None:
    """Copy ``result`` into ``dest`` (same shape), casting as the copy kernel does."""
    from .kernels.copy import copy_into

    copy_into(dest, result)


def inplace_wrapper(functional, op):
    def inplace(self, *args, **kwargs):
        result = functional(self, *args, **kwargs)
        if tuple(result._size) != tuple(self._size):
            raise RuntimeError(f"output with shape {list(self._size)} doesn't match the broadcast "
                               f"shape {list(result._size)}")
        _check_cast(result.dtype, self)
        write_into(self, result)
        return self

    inplace.__name__ = op.name
    return inplace


def resize_out(out: TensorBase, shape) -> None:
    shape = tuple(shape)
    if tuple(out._size) == shape:
        return
    if out.numel() != 0:
        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(out._size)}, which does not match the required output shape {list(shape)}. "
            "This behavior is deprecated, and in a future PyTorch release outputs will not be "
            "resized unless they have zero elements. You can explicitly reuse an out tensor t by "
            "resizing it, inplace, to zero elements with t.resize_(0).", UserWarning, stacklevel=3)
    from .manual_bindings import call

    call("resize_", out, list(shape))


def out_wrapper(functional, op, functional_op):
    out_names = [a.name for a in op.schema.arguments if a.is_out]
    n_inputs = len([a for a in functional_op.schema.arguments])

    def with_out(*args, **kwargs):
        outs = [kwargs.pop(n) for n in out_names]
        result = functional(*args[:n_inputs], **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        for dest, res in zip(outs, results):
            if not isinstance(res, TensorBase):
                continue
            _check_cast(res.dtype, dest)
            resize_out(dest, res._size)
            write_into(dest, res)
        return tuple(outs) if isinstance(result, tuple) else outs[0]

    with_out.__name__ = op.name
    return with_out
