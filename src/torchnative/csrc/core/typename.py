"""The name of an object's type as upstream's C++ prints it in messages (``Py_TYPE(obj)->tp_name``)."""

from __future__ import annotations

TP_NAMES: dict = {}  # our classes that stand for upstream C types print with their C type name


def typename(obj) -> str:
    return type_name_of(type(obj))


def type_name_of(t: type) -> str:
    """A type's tp_name: a class defined in Python gives its name, a type defined in C its dotted
    name as compiled in (builtins bare)."""
    if t in TP_NAMES:
        return TP_NAMES[t]
    if t.__flags__ & (1 << 9) or t.__module__ == "builtins":  # heap type, or a builtin
        return t.__name__
    return f"{t.__module__}.{t.__name__}"
