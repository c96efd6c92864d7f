"""DLPack: torchnative tensors hold numpy buffers and offer no C-level exchange capsule."""

from __future__ import annotations


def dlpack_exchange_api():
    """Upstream returns a capsule of C function pointers; we have none, and say so with None
    (consumers then use ``__dlpack__``), never with a capsule that points nowhere."""
    return None


TORCH_C = {"torch._C._dlpack_exchange_api": dlpack_exchange_api}
