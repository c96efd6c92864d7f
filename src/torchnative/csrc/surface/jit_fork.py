"""``torch._C.fork`` and ``torch._C.wait`` outside TorchScript: ``torch.jit.fork`` runs the
function at once and hands back a completed Future, as upstream's eager fork does."""

from __future__ import annotations

from ..distributed.future import Future
from ..platform.pybind_errors import incompatible_arguments

_TRACEABLE = ("Only tensors and (possibly nested) tuples of tensors, lists, or dicts are supported "
              "as inputs or outputs of traced functions, but instead got value of type {}.")


def _inferable(v) -> bool:
    """Whether TorchScript can type the value (``toTypeInferredIValue``)."""
    import torch
    if v is None or isinstance(v, (torch.Tensor, bool, int, float, complex, str, torch.device,
                                   torch.dtype, torch.layout, torch.memory_format)):
        return True
    if isinstance(v, (list, tuple)):
        return all(_inferable(x) for x in v)
    if isinstance(v, dict):
        return all(_inferable(k) and _inferable(x) for k, x in v.items())
    return isinstance(v, Future)


def fork(*args, **kwargs) -> Future:
    if not args:
        raise RuntimeError("torch._C.fork: expected the function to run")
    result = args[0](*args[1:], **kwargs)
    if not _inferable(result):
        raise RuntimeError(f"Tracer cannot infer type of {result}\n:"
                           + _TRACEABLE.format(type(result).__name__))
    fut = Future()
    fut.set_result(result)
    return fut


def wait(fut):
    if not isinstance(fut, Future):
        raise incompatible_arguments("wait", ["(arg0: torch._C.Future) -> object"], (fut,))
    return fut.wait()


TORCH_C = {"torch._C.fork": fork, "torch._C.wait": wait}
