"""Setting a tensor's version counter directly (``torch._C._autograd._unsafe_set_version_counter``).

Autograd compares a saved tensor's version at backward with the one it saved; code that hides a
mutation from autograd on purpose (DDP's buffer broadcast, ``_unsafe_preserve_version_counter``)
puts the counter back afterwards. The counter is shared by a tensor and its views, so setting it
through one sets it for all of them, as upstream's shared VariableVersion does.
"""

from __future__ import annotations

from ..core.tensor import TensorBase
from ..platform.pybind_errors import incompatible_arguments

_SIGNATURE = ("(arg0: collections.abc.Sequence[torch.Tensor], arg1: "
              "collections.abc.Sequence[typing.SupportsInt | typing.SupportsIndex]) -> None")


def _sequence(obj, check) -> list | None:
    if isinstance(obj, (str, bytes)) or not hasattr(obj, "__len__") or not hasattr(obj, "__iter__"):
        return None
    items = list(obj)
    return items if all(check(o) for o in items) else None


def _is_index(o) -> bool:
    return hasattr(type(o), "__index__")


def unsafe_set_version_counter(tensors, versions) -> None:
    ts = _sequence(tensors, lambda o: isinstance(o, TensorBase))
    vs = _sequence(versions, _is_index)
    if ts is None or vs is None:
        raise incompatible_arguments("_unsafe_set_version_counter", [_SIGNATURE],
                                     (tensors, versions))
    if len(ts) != len(vs):
        raise RuntimeError(f"tensors_len={len(ts)}, versions_len={len(vs)}")
    vs = [int(v) for v in vs]
    for t, v in zip(ts, vs):
        if t._tn_inference:
            raise RuntimeError("Tried to call torch.autograd._unsafe_set_version() on a tensor that "
                               "does not have a version counter. Was it created in inference mode?")
        if v < 0:
            raise RuntimeError(f"Cannot set a version_counter to a value below 0: {v}")
    for t, v in zip(ts, vs):
        t._version_ref[0] = v


TORCH_C = {"torch._C._autograd._unsafe_set_version_counter": unsafe_set_version_counter}
