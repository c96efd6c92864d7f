"""pybind11's refusal of a call that none of a bound function's overloads accepts, in its words.

Upstream binds part of ``torch._C`` with pybind11 rather than its own argument parser; such a
function raises ``TypeError("<name>(): incompatible function arguments. The following argument
types are supported:\\n    1. <signature>\\n ...\\n\\nInvoked with: <arguments>")``, the signatures
as pybind11 prints them and the arguments by ``repr``.
"""

from __future__ import annotations


def incompatible_arguments(name: str, signatures, invoked) -> TypeError:
    """The TypeError for ``name`` called with the objects ``invoked``, which none of
    ``signatures`` (pybind11's text of each overload, ``(arg0: str) -> None``) accepts."""
    listed = "".join(f"\n    {i}. {sig}" for i, sig in enumerate(signatures, 1))
    return TypeError(f"{name}(): incompatible function arguments. The following argument types "
                     f"are supported:{listed}\n\nInvoked with: "
                     + ", ".join(repr(a) for a in invoked))
