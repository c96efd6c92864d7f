"""Refuse by name: the one exception type for what torchnative does not implement.

A refusing name exists only because upstream Python reads it while importing; using it raises
``TorchnativeNotImplementedError`` naming the symbol. Refusals are never truthy placeholders:
calling, instantiating or reading any member raises.
"""

from __future__ import annotations


class TorchnativeNotImplementedError(NotImplementedError):
    """Raised when code reaches something torchnative's torch._C does not implement."""

    def __init__(self, symbol: str, why: str = "not implemented in torchnative"):
        self.symbol = symbol
        super().__init__(f"{symbol}: {why}")


def refusing_function(qualname: str, why: str = "not implemented in torchnative"):
    """A callable that exists (upstream imports it) and refuses when called."""

    def refused(*args, **kwargs):
        raise TorchnativeNotImplementedError(qualname, why)

    name = qualname.rsplit(".", 1)[-1]
    refused.__name__ = name
    refused.__qualname__ = name
    refused.__module__ = qualname.rsplit(".", 1)[0] if "." in qualname else "torch._C"
    refused.__torchnative_refuses__ = qualname
    return refused


class RefusedClassType(type):
    """Metaclass of refusing classes. Upstream's bound C++ classes have pybind11's metaclass, not
    ``type``, and upstream Python relies on that (``class M(type(torch._C._Await), type(Generic))``)."""


def refusing_class(qualname: str, why: str = "not implemented in torchnative", bases=(object,),
                   metaclass=RefusedClassType, members=()):
    """A class that exists so upstream can name or subclass it; instantiating it or calling
    any of its members (the ones upstream's class defines) refuses."""

    def __init__(self, *args, **kwargs):
        raise TorchnativeNotImplementedError(qualname, why)

    mod, _, name = qualname.rpartition(".")
    body = {"__init__": __init__, "__module__": mod or "torch._C",
            "__torchnative_refuses__": qualname, "__qualname__": name}
    for m in members:
        body[m] = refusing_function(f"{qualname}.{m}", why)
    return metaclass(name, bases, body)


def refuses(obj) -> bool:
    """True for objects made by this module (used by the surface census)."""
    return "__torchnative_refuses__" in getattr(obj, "__dict__", {})
