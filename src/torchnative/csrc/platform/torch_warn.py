"""TORCH_WARN: where a warning raised inside ``torch._C`` lands.

Upstream's C++ warnings reach Python through ``PyErr_WarnEx`` at stack level 1: they are
attributed to the innermost Python frame, the code that called into ``torch._C`` (a user's line,
or upstream's own Python such as ``torch/nn/functional.py``). Our ``torch._C`` is Python, so the
frames of ``torchnative`` (its ``csrc`` and ``_C``) are skipped to find that frame; a fixed
``stacklevel`` would land inside the binding or the door, whose depth varies with the path.
"""

from __future__ import annotations

import os
import sys
import warnings

_CSRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_OURS = (os.path.join(_CSRC, ""), os.path.join(os.path.dirname(_CSRC), "_C", ""))


def torch_warn(message: str, category: type = UserWarning) -> None:
    """Warn as TORCH_WARN does: attributed to the innermost frame outside ``torch._C``."""
    level = 2  # warnings.warn's stacklevel of our caller
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_OURS):
        f = f.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


_WARNED_ONCE: set = set()


def torch_warn_once(message: str, category: type = UserWarning) -> None:
    """TORCH_WARN_ONCE: ``torch_warn`` the first time a message is given in this process (each of
    upstream's call sites has a message of its own, so the message stands for the site)."""
    if message not in _WARNED_ONCE:
        _WARNED_ONCE.add(message)
        torch_warn(message, category)
