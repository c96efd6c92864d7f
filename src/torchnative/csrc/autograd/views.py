"""In-place operations and history: rebase_history, CopySlices (upstream's
torch/csrc/autograd/VariableTypeUtils.h and functions/tensor.cpp).

An in-place op on a tensor that is not a view makes the op's node the tensor's grad_fn. On a
view, the gradient must reach the view's base: the base's grad_fn becomes CopySlices, which runs
the op's node on the slice of the base's gradient the view covers, and the view's grad_fn becomes
an AsStridedBackward0 reading that slice of the base.
"""

from __future__ import annotations

from .node import Node, gradient_edge


def rebase_history(t, node) -> None:
    base = t._view_base
    if base is None:
        t._grad_fn = node
        t._output_nr = 0
        t._requires_grad = True
        return
    geometry = (t._size, t._stride, t._offset - base._offset)
    copy_slices = CopySlices(base, geometry, node)
    base._grad_fn = copy_slices
    base._output_nr = 0
    base._requires_grad = True
    view_fn = AsStridedBackward0(gradient_edge(base), base, geometry)
    t._grad_fn = view_fn
    t._output_nr = 0
    t._requires_grad = True


class CopySlices(Node):
    def name(self) -> str:
        return "torch::autograd::CopySlices"

    def __init__(self, base, view_geometry, fn):
        super().__init__([gradient_edge(base)] + list(fn._next[1:]))
        self._base_geometry = (base._size, base._stride)
        self._view = view_geometry
        self.fn = fn
        self._input_meta = ((base._size, base._dtype),)

    def _run(self, grads):
        import torch

        grad = grads[0]
        if grad is None:
            return [None] * len(self._next)
        size, stride = self._base_geometry
        result = torch.empty_strided(size, stride, dtype=grad.dtype)
        result.copy_(grad)
        vsize, vstride, voff = self._view
        grad_slice = result.as_strided(vsize, vstride, voff)
        from . import engine

        # fn's first edge (the view's old history) is not part of this graph task; it must
        # still compute that gradient (upstream adds the missing nodes to exec_info)
        saved, engine.TLS.needed = engine.TLS.needed, None
        try:
            res = self.fn._run([grad_slice.clone(memory_format=torch.contiguous_format)])
        finally:
            engine.TLS.needed = saved
        out = [None] * len(self._next)
        for i, r in enumerate(res):
            if i >= len(out) or self._next[i][0] is None and i != 0:
                continue
            if i == 0:
                if r is None:
                    grad_slice.zero_()
                else:
                    grad_slice.copy_(r)
                out[0] = result
            else:
                out[i] = r
        return out

    def release_variables(self) -> None:
        self.fn.release_variables()


class AsStridedBackward0(Node):
    """The grad_fn of a view modified in place: its gradient scattered into the base's shape."""

    def __init__(self, base_edge, base, geometry):
        super().__init__([base_edge])
        self._base_size, self._base_stride = base._size, base._stride
        self._geometry = geometry
        self._input_meta = ((geometry[0], base._dtype),)

    def _run(self, grads):
        import torch

        grad = grads[0]
        if grad is None:
            return [None]
        size, stride, off = self._geometry
        zeros = torch.zeros(self._base_size, dtype=grad.dtype)
        if zeros.stride() != tuple(self._base_stride):
            zeros = torch.empty_strided(self._base_size, self._base_stride,
                                        dtype=grad.dtype).zero_()
        return [torch.as_strided_scatter(zeros, grad, size, stride, off)]
