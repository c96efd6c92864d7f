"""``torch._C._only_lift_cpu_tensors`` / ``_set_only_lift_cpu_tensors``: FakeTensorMode sets it
while active so ``torch.tensor(data, device=...)`` builds its data on the CPU, lifts it, then
moves it. With the CPU the only device here, both of upstream's orders give the same tensor; the
flag is kept (process-wide, as upstream's) so what is set reads back."""

from __future__ import annotations

_ONLY_LIFT_CPU = [False]


def only_lift_cpu_tensors() -> bool:
    return _ONLY_LIFT_CPU[0]


def set_only_lift_cpu_tensors(value: bool) -> None:
    _ONLY_LIFT_CPU[0] = bool(value)


TORCH_C = {
    "torch._C._only_lift_cpu_tensors": only_lift_cpu_tensors,
    "torch._C._set_only_lift_cpu_tensors": set_only_lift_cpu_tensors,
}
