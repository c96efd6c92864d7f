"""torch._C's pybind enums as Python IntEnums, members and values read off upstream."""

from __future__ import annotations

import enum

from .tables import c_enums


def _make(qualname: str, members: dict[str, int]) -> type[enum.IntEnum]:
    mod, _, name = qualname.rpartition(".")
    cls = enum.IntEnum(name, list(members.items()), module=mod, qualname=name)
    # pybind enums print as "DispatchKey.CPU" and hash/compare like their value.
    cls.__str__ = lambda self: f"{type(self).__name__}.{self.name}"
    return cls


# Enums of subsystems we do not build stay out (none at present: c10d is csrc/distributed).
NOT_BUILT: tuple[str, ...] = ()

ENUMS: dict[str, type[enum.IntEnum]] = {
    q: _make(q, m) for q, m in c_enums()["enums"].items() if not q.startswith(NOT_BUILT)
}

DispatchKey = ENUMS["torch._C.DispatchKey"]
Tag = ENUMS["torch._C.Tag"]
TorchFunctionState = ENUMS["torch._C._TorchFunctionState"]
TorchDispatchModeKey = ENUMS["torch._C._TorchDispatchModeKey"]

TORCH_C = dict(ENUMS)
# enums pybind11 exported the members of into their module (torch._C.SUM is AggregationType.SUM)
TORCH_C.update({f"{q.rpartition('.')[0]}.{name}": member
                for q in c_enums()["exported"] if q in ENUMS
                for name, member in ENUMS[q].__members__.items()})
