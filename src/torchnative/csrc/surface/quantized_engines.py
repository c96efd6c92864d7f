"""Quantized engines: none. Upstream lists the engines its build linked (FBGEMM, X86, QNNPACK,
ONEDNN); a build without any answers with an empty list and ``NoQEngine`` (0), and refuses to
select one, which is what torchnative is. ``torch.backends.quantized.engine`` then reads "none".
"""

from __future__ import annotations

_NAMES = {0: "NoQEngine", 1: "FBGEMM", 2: "QNNPACK", 3: "ONEDNN", 4: "X86"}


def supported_qengines() -> list:
    return []


def get_qengine() -> int:
    return 0


def set_qengine(engine: int) -> None:
    if engine not in supported_qengines():
        raise RuntimeError(f"quantized engine {_NAMES.get(engine, engine)} is not supported")


TORCH_C = {
    "torch._C._supported_qengines": supported_qengines,
    "torch._C._get_qengine": get_qengine,
    "torch._C._set_qengine": set_qengine,
}
