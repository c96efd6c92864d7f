"""Binding recipes: calls whose parse depends only on the argument types are bound once.

Parsing a call (``binding.Signature.parse``) tries a spelling's signatures in turn and checks
every argument. For most calls, which signature wins and where each argument lands in the
operator's schema depend only on the *types* of the arguments (a plain Tensor, a Python int,
None, a dtype ...) and the keyword names. Such a call is parsed in full the first time; the
outcome is kept as a recipe under that pattern (a list or tuple contributes its elements' types
too), and later calls with the same pattern are placed by the recipe, as straight-line code,
without parsing.

A pattern is never recorded when any check on the way was value-dependent: a tensor offered
where a number is allowed (0-dim tensors are accepted, others not), nested lists, a tensor
subclass (``__torch_function__`` may take the call), or an ``out=`` tensor (kept on the full
path for simplicity).
"""

from __future__ import annotations

import numbers

from ..core.construct import wrapped_number
from ..core.dtypes import dtype as _dtype
from ..core.generator import Generator
from ..core.device import CPU, device as _device
from ..core.layouts import CLASSES as _LAYOUT_CLASSES
from ..core.python_classes import plain_tensor_types
from ..dispatch.boxing import keyword_at_default

_MISSING = object()
_RECIPE_FILE = f"{__file__}:<recipe>"  # the generated place()/run() code
VALUE_DEPENDENT, FAILS = object(), object()

# Types whose every PythonArgParser check is decided by the type alone (binding._checker).
_SCALAR_TYPES = frozenset((int, float, bool, type(None), str, _dtype, _device,
                           *_LAYOUT_CLASSES.values()))
# Parameter kinds a plain tensor is checked against by isinstance alone.
_TENSOR_TYPE_ONLY = frozenset(("Tensor", "TensorList", "c10::List<::std::optional<Tensor>>",
                               "bool", "std::string", "c10::string_view", "Generator", "Layout",
                               "MemoryFormat", "QScheme", "Storage"))



def key_of(self_tensor, args: tuple, kwargs: dict):
    """The pattern of a call: argument types (a list or tuple with its elements' types) and
    keyword (name, type) pairs."""
    key = tuple(map(type, args))
    if self_tensor is not None:
        key = (type(self_tensor),) + key
    if not NOT_SEQUENCES.issuperset(key):
        key = tuple(map(_type_key, args))
        if self_tensor is not None:
            key = (_type_key(self_tensor),) + key
    if kwargs:
        types = tuple(map(type, kwargs.values()))
        if NOT_SEQUENCES.issuperset(types):
            key += tuple(zip(kwargs, types))
        else:
            key += tuple((k, _type_key(v)) for k, v in kwargs.items())
    return key


# types seen that are not list or tuple (sub)classes: the common key needs no element types
NOT_SEQUENCES: set = set(_SCALAR_TYPES)


def _type_key(v):
    t = type(v)
    if t is tuple or t is list:  # by length where it is short: map() costs three times these
        n = len(v)
        return (t, type(v[0]), type(v[1])) if n == 2 else (t, type(v[0])) if n == 1 else \
            (t, *map(type, v))
    if isinstance(v, (list, tuple)):
        return (t, *map(type, v))
    NOT_SEQUENCES.add(t)
    return t


def _type_determined(obj, kind: str, plain: frozenset) -> bool:
    tp = type(obj)
    if tp in _SCALAR_TYPES:
        return True
    if tp in plain:
        return kind in _TENSOR_TYPE_ONLY
    if kind == "Generator":   # the parser's check is isinstance(obj, Generator)
        return issubclass(tp, Generator)
    if isinstance(obj, (list, tuple)):
        # a tensor list's check reads every element (one that is no tensor raises: the
        # parser's own path); an int list's, its first (a 0-dim tensor would be accepted)
        if kind in _TENSOR_LISTS:
            return all(type(x) in plain for x in obj)
        return all(type(x) in _SCALAR_TYPES for x in obj)
    return False


_TENSOR_LISTS = frozenset(("TensorList", "c10::List<::std::optional<Tensor>>"))



def _is_int(obj) -> bool:
    t = type(obj)
    if t is int:
        return True
    return (isinstance(obj, numbers.Integral) and t is not bool) or t.__name__ == "SymInt"

def _walk(sig, args: tuple, kwargs: dict, plain: frozenset):
    """Follow ``sig.parse`` on this call: FAILS (decided by types), VALUE_DEPENDENT, or the list
    of (source, converter) per parameter, where source is an index into ``args``, a keyword
    name, or ("const", value)."""
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
            if conv is not None and p.kind == "Tensor":
                conv = wrapped_number  # a Python number for a Tensor parameter
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

    __slots__ = ("op", "template", "fills", "kw_const", "kw_fills", "self_pos", "options",
                 "place", "run")

    def __init__(self, sig, sources: list, method: bool):
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
                self.kw_const["device"] = CPU
            if self.kw_const.get("pin_memory", _MISSING) is None:
                self.kw_const["pin_memory"] = False
        # a keyword-only argument at its schema default is left out, as the boxed convention
        # hands it to modes and Python kernels (dispatch/boxing.py): the door's plain lane then
        # sees no keywords to check (add's alpha=1)
        self.kw_const = {name: v for name, v in self.kw_const.items()
                         if not keyword_at_default(self.op, name, v)}
        # Python-only options (requires_grad) are applied by the caller after the call
        self.options = [(name, sources[vi][0]) for vi, name in plan.options
                        if sources[vi][0] != ("const", None) and sources[vi][0] != ("const", False)]

        self.place, self.run = self._compile()

    def _compile(self):
        """``place(self_tensor, args, kwargs) -> (args, kwargs, options)`` for the door, as
        straight-line code: the recipe is fixed, so there is nothing left to loop over. Without
        Python-only options, also ``run(self_tensor, args, kwargs)``: the door's call with those
        arguments and the binding's handling of its result, in one frame (else None)."""
        from ..dispatch.door import aten_dispatch
        from .results import as_returned

        env = {"_NO_OPTIONS": _NO_OPTIONS, "_door": aten_dispatch, "_op": self.op,
               "_returned": as_returned}

        def const(value, i=[0]):
            i[0] += 1
            env[f"c{i[0]}"] = value
            return f"c{i[0]}"

        def source(src, conv):
            if type(src) is int:
                expr = f"args[{src}]"
            elif type(src) is str:
                expr = f"kwargs[{src!r}]"
            elif type(src) is tuple and src[0] == "const":
                return const(src[1])
            else:
                expr = "list(args)"
            return expr if conv is None else f"{const(conv)}({expr})"

        slots = [const(v) for v in self.template]
        if self.self_pos is not None:
            slots[self.self_pos] = "self_tensor"
        for slot, src, conv in self.fills:
            slots[slot] = source(src, conv)
        kw = [f"{name!r}: {const(v)}" for name, v in self.kw_const.items()]
        kw += [f"{name!r}: {source(src, conv)}" for name, src, conv in self.kw_fills]
        opts = [f"{name!r}: {source(src, None)}" for name, src in self.options]
        positional = f"({''.join(x + ', ' for x in slots)})"
        code = (f"def place(self_tensor, args, kwargs):\n"
                f"    return {positional}, {{{', '.join(kw)}}}, "
                f"{'{' + ', '.join(opts) + '}' if opts else '_NO_OPTIONS'}\n"
                f"def run(self_tensor, args, kwargs):\n"
                f"    r = _door(_op, {positional}, {{{', '.join(kw)}}})\n"
                f"    return r if type(r) is not tuple and type(r) is not list else "
                f"_returned(_op, r)\n")
        # named inside the package: tracebacks that leave out torch._C's own frames (anomaly
        # mode's forward stack) leave these out too
        exec(compile(code, _RECIPE_FILE, "exec"), env)
        return env["place"], (None if opts else env["run"])


_NO_OPTIONS: dict = {}


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
