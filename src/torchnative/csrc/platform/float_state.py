"""The quiet float state: numpy's error state with every float exception ignored.

C++ kernels raise no warning for a float exception: inf - inf is a NaN value, an overflow an
infinity. numpy reports the same IEEE flags as RuntimeWarnings (or raises, under the user's
``np.seterr``), so our kernels run in this state. numpy >= 2 keeps its error state in a context
variable; setting it to a prepared all-ignore value is two C calls, where ``np.errstate`` would
rebuild the state on every entry.
"""

from __future__ import annotations

import numpy as np


def _ignoring_extobj():
    """numpy's error-state context variable and its all-ignore value; (None, None) where numpy
    does not have it."""
    try:
        from numpy._core._ufunc_config import _extobj_contextvar as cv
    except ImportError:
        return None, None
    with np.errstate(all="ignore"):
        return cv, cv.get()


_ERR_CV, _ERR_IGNORE = _ignoring_extobj()


class _Quiet:
    """np.errstate(all="ignore") without rebuilding the state on every entry."""

    __slots__ = ("_token",)

    def __enter__(self):
        self._token = _ERR_CV.set(_ERR_IGNORE)
        return self

    def __exit__(self, *exc):
        _ERR_CV.reset(self._token)
        return False


def quiet():
    """Float exceptions are values here (inf, nan), as in C++; numpy must not warn about them."""
    return _Quiet() if _ERR_CV is not None else np.errstate(all="ignore")


def quiet_enter():
    """The hot-path form of ``quiet``: a token for ``quiet_exit`` (None: nothing to undo)."""
    return _ERR_CV.set(_ERR_IGNORE) if _ERR_CV is not None else None


def quiet_exit(token) -> None:
    if token is not None:
        _ERR_CV.reset(token)


def _no_state(_):
    return None


# quiet_enter/quiet_exit as the C calls themselves, for the hottest paths (no Python frame):
# ``token = QUIET_SET(QUIET_STATE)`` ... ``QUIET_RESET(token)``
QUIET_SET = _ERR_CV.set if _ERR_CV is not None else _no_state
QUIET_RESET = _ERR_CV.reset if _ERR_CV is not None else _no_state
QUIET_STATE = _ERR_IGNORE
