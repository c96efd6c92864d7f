"""Arguments as upstream hands them to Python: the boxed-call convention.

When upstream's dispatcher calls a Python kernel, a decomposition, a meta function or a
``__torch_dispatch__`` handler, it rebuilds ``(args, kwargs)`` from the full argument stack:
positional schema arguments go in ``args`` with trailing ones that equal their default dropped;
keyword-only ones go in ``kwargs`` only when they differ from their default. Python kernels are
written against that convention (e.g. ``torch._refs.arange`` relies on an absent ``layout``
taking its own default), and modes observe it, so the door normalizes to it at every Python
boundary.
"""

from __future__ import annotations

_MISSING = object()


class _Layout:
    __slots__ = ("names", "kwarg_only", "defaults", "has_default", "n_pos", "as_given")

    def __init__(self, schema):
        args = schema.arguments
        self.names = [a.name for a in args]
        self.kwarg_only = [a.kwarg_only for a in args]
        self.has_default = [a.has_default_value() for a in args]
        self.defaults = [a.default_value if a.has_default_value() else _MISSING for a in args]
        self.n_pos = sum(1 for k in self.kwarg_only if not k)
        # a call passing every argument positionally is already boxed when none is keyword-only
        # and the last has no default (nothing to drop): the count such a call has, else -1
        self.as_given = len(args) if self.n_pos == len(args) and not (
            args and self.has_default[-1]) else -1


def _layout(op) -> _Layout:
    lay = op.cache.get("__boxing__")
    if lay is None:
        lay = op.cache["__boxing__"] = _Layout(op.schema)
    return lay


def _same(value, default) -> bool:
    if default is _MISSING:
        return False
    if value is default:
        return True
    if type(value) in (list, tuple) or type(default) in (list, tuple):
        return isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)) and \
            list(value) == list(default)
    if hasattr(value, "_storage"):  # tensors never equal a default
        return False
    try:
        return type(value) is type(default) and bool(value == default)
    except Exception:
        return False


def keyword_at_default(op, name: str, value) -> bool:
    """Whether ``value`` of ``op``'s argument ``name`` is that argument's schema default (a
    keyword-only one the convention leaves out)."""
    lay = _layout(op)
    return name in lay.names and _same(value, lay.defaults[lay.names.index(name)])


def normalize(op, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    lay = _layout(op)
    if not kwargs and len(args) == lay.as_given:
        return tuple(args), {}
    values = list(args) + [_MISSING] * (len(lay.names) - len(args))
    for name, v in kwargs.items():
        try:
            values[lay.names.index(name)] = v
        except ValueError:
            return args, kwargs  # not this schema's argument: leave the call as it was made
    pos = []
    for i in range(lay.n_pos):
        pos.append(lay.defaults[i] if values[i] is _MISSING else values[i])
    while pos and lay.has_default[len(pos) - 1] and _same(pos[-1], lay.defaults[len(pos) - 1]):
        pos.pop()
    kw = {}
    for i in range(lay.n_pos, len(lay.names)):
        v = values[i]
        if v is _MISSING or _same(v, lay.defaults[i]):
            continue
        kw[lay.names[i]] = v
    return tuple(pos), kw


def normalized(op, fn):
    """``fn`` called with the boxed-call convention."""

    def call(*args, **kwargs):
        a, k = normalize(op, args, kwargs)
        return fn(*a, **k)

    return call
