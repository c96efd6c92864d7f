"""torch._C._ImperativeEngine: the object torch.autograd runs backward passes through."""

from __future__ import annotations

from ..refuse import TorchnativeNotImplementedError


class ImperativeEngine:
    def __init__(self):
        self._callbacks: list = []

    def run_backward(self, tensors, grad_tensors, keep_graph, create_graph, inputs,
                     allow_unreachable, accumulate_grad):
        raise TorchnativeNotImplementedError("torch._C._ImperativeEngine.run_backward",
                                             "the autograd engine is not implemented yet")

    def queue_callback(self, callback) -> None:
        self._callbacks.append(callback)

    def is_checkpoint_valid(self) -> bool:
        return True


TORCH_C = {"torch._C._ImperativeEngine": ImperativeEngine}
