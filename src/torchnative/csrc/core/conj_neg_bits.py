"""``torch._C._set_conj`` / ``_set_neg``: set a tensor's lazy conjugate / negative bit.

No tensor carries either bit here (``conj()`` and ``_neg_view()`` materialise, so ``is_conj()``
and ``is_neg()`` are always False). Clearing a bit is therefore true as asked; setting one
would need the lazy views, and refuses by name.
"""

from __future__ import annotations

from .refuse import TorchnativeNotImplementedError


def set_conj(tensor, value: bool) -> None:
    if value:
        raise TorchnativeNotImplementedError(
            "torch._C._set_conj", "no tensor carries a lazy conjugate bit in torchnative")


def set_neg(tensor, value: bool) -> None:
    if value:
        raise TorchnativeNotImplementedError(
            "torch._C._set_neg", "no tensor carries a lazy negative bit in torchnative")


TORCH_C = {"torch._C._set_conj": set_conj, "torch._C._set_neg": set_neg}
