"""Binding recipes: calls whose parse depends only on the argument types are bound once.

Parsing a call (``binding.Signature.parse``) tries a spelling's signatures in turn and checks
every argument. For most calls, which signature wins and where each argument lands in the
operator's schema depend only on the *types* of the arguments (a plain Tensor, a Python int,
None, a dtype ...) and the keyword names. Such a call is parsed in full the first time; the
outcome is kept as a recipe under (types, keyword names), and later calls with the same pattern
are placed by the recipe without parsing.

A pattern is never recorded when any check on the way was value-dependent: a tensor offered
where a number is allowed (0-dim tensors are accepted, others not), a list or tuple (its elements
decide), a tensor subclass (``__torch_function__`` may take the call), an ``out=`` tensor or a
Python-only option such as ``requires_grad`` (kept on the full path for simplicity).
"""

from __future__ import annotations

import sys

from .dtypes import dtype as _dtype
from .device import device as _device
from .layouts import CLASSES as _LAYOUT_CLASSES

_MISSING = object()
VALUE_DEPENDENT, FAILS = object(), object()

# Types whose every PythonArgParser check is decided by the type alone (binding._checker).
_SCALAR_TYPES = frozenset((int, float, bool, type(None), str, _dtype, _device,
                           *_LAYOUT_CLASSES.values()))
# Parameter kinds a plain tensor is checked against by isinstance alone.
_TENSOR_TYPE_ONLY = frozenset(("Tensor", "TensorList", "c10::List<::std::optional<Tensor>>",
                               "bool", "std::string", "c10::string_view", "Generator", "Layout",
                               "MemoryFormat", "QScheme", "Storage"))

_plain: list = []


def plain_tensor_types() -> frozenset:
    """torch.Tensor and nn.Parameter: the tensor types with neither __torch_function__ nor
    __torch_dispatch__ of their own (empty until torch's Python classes exist)."""
    if _plain:
        return _plain[0]
    t = sys.modules.get("torch._tensor")
    p = sys.modules.get("torch.nn.parameter")
    if t is None or not hasattr(t, "Tensor") or p is None or not hasattr(p, "Parameter"):
        return frozenset()
    _plain.append(frozenset((t.Tensor, p.Parameter)))
    return _plain[0]


def _type_determined(obj, kind: str, plain: frozenset) -> bool:
    tp = type(obj)
    if tp in _SCALAR_TYPES:
        return True
    return tp in plain and kind in _TENSOR_TYPE_ONLY


def _walk(sig, args: tuple, kwargs: dict, plain: frozenset):
    """Follow ``sig.parse`` on this call: FAILS (decided by types), VALUE_DEPENDENT, or the list
    of (source, converter) per parameter, where source is an index into ``args``, a keyword
    name, or ("const", value)."""
    from .binding import _is_int

    nargs = len(args)
    if nargs > sig.max_pos and not sig.varargs:
        return FAILS
    out = []
    pos = 0
    remaining = len(kwargs)
    for p in sig.params:
        is_kwd = False
        obj, src = _MISSING, None
        if pos < nargs:
            if p.kwarg_only:
                return FAILS
            obj, src = args[pos], pos
        elif kwargs:
            for name in (p.name, *p.aliases):
                if name in kwargs:
                    obj, src = kwargs[name], name
                    break
            is_kwd = True
        if (obj is _MISSING and p.optional) or (obj is None and p.allow_none):
            out.append((("const", p.python_default() if obj is _MISSING else None), None))
        elif obj is _MISSING:
            return FAILS
        elif not _type_determined(obj, p.kind, plain):
            return VALUE_DEPENDENT
        elif p.check(obj):
            conv = p.convert if p.needs_convert and p.convert(obj) is not obj else None
            out.append((src, conv))
        elif sig.varargs and pos == 0 and not is_kwd and all(_is_int(a) for a in args):
            out.append((("varargs",), None))
            pos = nargs
            continue
        else:
            return FAILS
        if not is_kwd:
            pos += 1
        elif obj is not _MISSING:
            remaining -= 1
    return FAILS if remaining > 0 else out


class Recipe:
    """Where each parsed value lands: the overload, a positional template with constants filled
    in, and fills from the call's arguments."""

    __slots__ = ("op", "template", "fills", "kw_const", "kw_fills", "self_pos", "options")

    def __init__(self, sig, sources: list, method: bool):
        from .binding import _cpu

        plan = sig.plan(False)
        self.op = plan.op
        self.template = list(plan.template)
        self.self_pos = plan.self_pos if method else None
        self.fills, self.kw_const, self.kw_fills = [], {}, []
        for vi, slot in plan.to_positional:
            src, conv = sources[vi]
            if type(src) is tuple and src[0] == "const":
                self.template[slot] = src[1]
            else:
                self.fills.append((slot, src, conv))
        for vi, name in plan.to_keyword:
            src, conv = sources[vi]
            if type(src) is tuple and src[0] == "const":
                self.kw_const[name] = src[1]
            else:
                self.kw_fills.append((name, src, conv))
        if plan.options_filled:  # the TensorOptions defaults sig.target applies
            if plan.factory and self.kw_const.get("device", _MISSING) is None:
                self.kw_const["device"] = _cpu()
            if self.kw_const.get("pin_memory", _MISSING) is None:
                self.kw_const["pin_memory"] = False
        # Python-only options (requires_grad) are applied by the caller after the call
        self.options = [(name, sources[vi][0]) for vi, name in plan.options
                        if sources[vi][0] != ("const", None) and sources[vi][0] != ("const", False)]

    def place(self, self_tensor, args: tuple, kwargs: dict):
        positional = self.template.copy()
        if self.self_pos is not None:
            positional[self.self_pos] = self_tensor
        for slot, src, conv in self.fills:
            v = _value(src, args, kwargs)
            positional[slot] = v if conv is None else conv(v)
        keyword = self.kw_const.copy() if self.kw_const else {}
        for name, src, conv in self.kw_fills:
            v = _value(src, args, kwargs)
            keyword[name] = v if conv is None else conv(v)
        if not self.options:
            return tuple(positional), keyword, _NO_OPTIONS
        options = {name: src[1] if type(src) is tuple else _value(src, args, kwargs)
                   for name, src in self.options}
        return tuple(positional), keyword, options


_NO_OPTIONS: dict = {}


def _value(src, args, kwargs):
    t = type(src)
    if t is int:
        return args[src]
    if t is str:
        return kwargs[src]
    return list(args)  # ("varargs",)


def record(compiled: list, winner, self_tensor, args: tuple, kwargs: dict):
    """The recipe for this call pattern, or None when its parse was not decided by types."""
    plain = plain_tensor_types()
    if not plain:
        return None
    if self_tensor is not None and type(self_tensor) not in plain:
        return None
    for sig in compiled:
        walked = _walk(sig, args, kwargs, plain)
        if walked is VALUE_DEPENDENT:
            return None
        if walked is FAILS:
            if sig is winner:
                return None
            continue
        if sig is not winner or sig.out_index is not None and \
                walked[sig.out_index][0] != ("const", None):
            return None
        return Recipe(sig, walked, self_tensor is not None)
    return None
