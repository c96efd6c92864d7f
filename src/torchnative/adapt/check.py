"""A method's settings refused at construction, by name, rather than at its first batch (or
never: a negative threshold silently selects nothing)."""

from __future__ import annotations

import numbers


def real(method: str, name: str, value, lo: float | None = 0.0, hi: float | None = None,
         optional: bool = False):
    """A real number (not a bool) in [lo, hi] (either end None: open); None where optional."""
    if value is None and optional:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{method}: {name} must be a real number, got {type(value).__name__}")
    if value != value or (lo is not None and value < lo) or (hi is not None and value > hi):
        where = (f"in [{lo}, {hi}]" if lo is not None and hi is not None else
                 f">= {lo}" if lo is not None else f"<= {hi}")
        raise ValueError(f"{method}: {name} must be {where}, got {value!r}")
    return value


def integer(method: str, name: str, value, lo: int = 1, optional: bool = False):
    """An int (not a bool) >= lo; None where optional."""
    if value is None and optional:
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{method}: {name} must be an int, got {type(value).__name__}")
    if value < lo:
        raise ValueError(f"{method}: {name} must be >= {lo}, got {value!r}")
    return int(value)


def sign(method: str, value):
    """The control's direction: +1 learns, -1 must make the error rise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value not in (1, -1):
        raise ValueError(f"{method}: sign must be 1.0 or -1.0, got {value!r}")
    return float(value)


OPTIMIZERS = ("adam", "sgd")  # what method.make_optimizer makes


def optimizer(method: str, value):
    if not isinstance(value, str) or value.lower() not in OPTIMIZERS:
        raise ValueError(f"{method}: optim must be 'adam' or 'sgd', got {value!r}")
    return value
