"""Callables by qualified name: how a case says what to call, in either interpreter.

A case names its callable (``torch.add``, ``torch.Tensor.add_``, ``torch.nn.functional.relu``,
``operator.iadd``, ``torch.ops.aten.slice.Tensor``) instead of pickling it, so ours resolves its own
object for the same spelling. OpInfo entries whose callable is a lambda or a local wrapper have no
such name; they are skipped and counted, never approximated.
"""

from __future__ import annotations

import importlib

# Namespaces searched for a callable's public name, in order of preference.
NAMESPACES = ("torch", "torch.Tensor", "torch.nn.functional", "torch.linalg", "torch.fft",
              "torch.special", "torch.masked", "torch.signal.windows", "torch.nn.init", "operator")


def reverse_map(torch) -> dict[int, str]:
    """id(callable) -> first qualified name under which it is reachable (upstream side)."""
    found: dict[int, str] = {}
    for ns in NAMESPACES:
        try:
            obj = resolve(ns, torch)
        except (ImportError, AttributeError):
            continue
        for attr in dir(obj):
            try:
                val = getattr(obj, attr)
            except Exception:
                continue
            if callable(val) and not isinstance(val, type):
                # prefer the public spelling of an alias: torch.Tensor.abs over __abs__
                if id(val) not in found or (found[id(val)].rsplit(".", 1)[1].startswith("_")
                                            and not attr.startswith("_") and found[id(val)].startswith(ns + ".")):
                    found[id(val)] = f"{ns}.{attr}"
    return found


def qualified_name(fn, rev: dict[int, str], torch) -> str | None:
    """The name that resolves back to exactly ``fn``, or None (lambda, wrapper, unknown)."""
    name = rev.get(id(fn))
    if name is None and isinstance(fn, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        name = "torch.ops." + (fn._qualified_op_name.replace("::", ".") if
                               isinstance(fn, torch._ops.OpOverloadPacket) else
                               f"{fn.namespace}.{fn._opname}.{fn._overloadname}")
    if name is None:
        return None
    try:
        return name if resolve(name, torch) is fn else None
    except Exception:
        return None


def resolve(name: str, torch=None):
    """Import the longest module prefix of ``name``, then walk attributes."""
    parts = name.split(".")
    if parts[0] == "torch" and torch is not None:
        obj, rest = torch, parts[1:]
    else:
        obj, rest = importlib.import_module(parts[0]), parts[1:]
    for part in rest:
        obj = getattr(obj, part)
    return obj
