"""Does a call bind to a schema, and as what? (``torch.ops.ns.op(...)`` picking an overload)

Upstream tries each overload's schema in order and takes the first whose arguments convert to
the schema's types (``getOpWithStack``: each value through ``toIValue``, pybind11's casters
underneath), then calls it with the converted values; we do the same: counts, names, then each
value converted for its argument's JIT type, or refused:

* an int takes Python's ints and bools, numpy's integers, a one-element tensor (its item, read
  through the dispatcher as upstream reads it) and what converts through ``__index__`` or
  ``__int__``, never a float;
* a float takes ints, bools, floats and what converts through ``__float__`` (a one-element
  tensor: its item);
* a bool takes bools, None (False) and anything with a truth value of its own (``__bool__``);
* a Scalar takes Python's own numbers only (int, bool, float and their subclasses, complex), not
  tensors nor numpy's integer and float32 scalars;
* an int or float list takes a sequence of such values, and, for a fixed size ``int[N]`` or
  ``float[N]`` (not ``SymInt[N]``), one value repeated.
Modes and the kernel then see the converted values (a bool for ``keepdim=1``, a list for a
tuple of ints), as upstream's boxed call has them.
"""

from __future__ import annotations

import numbers
import operator

from ..core.tensor import TensorBase, numel_of
from ..ops.numbers_as_tensors import should_allow_numbers_as_tensors

_MISSING = object()
NO = object()  # a value that does not convert


def _to_int(v):
    tp = type(v)
    if tp is int:
        return v
    if tp is bool:
        return int(v)
    if isinstance(v, float):
        return NO  # pybind11's int caster refuses a float
    if isinstance(v, TensorBase):
        return int(v) if numel_of(v) == 1 else NO
    try:
        return operator.index(v)
    except Exception:  # noqa: BLE001 -- any failure: the value does not convert this way
        pass
    if getattr(type(v), "__int__", None) is None:
        return NO  # (pybind11 converts a number only: a string has no __int__)
    try:
        return int(v)
    except Exception:  # noqa: BLE001
        return NO


def _to_float(v):
    tp = type(v)
    if tp is float:
        return v
    if tp is int or tp is bool:
        return float(v)
    if isinstance(v, TensorBase):
        return float(v) if numel_of(v) == 1 else NO
    if isinstance(v, (str, bytes)):
        return NO
    try:
        return float(v)
    except Exception:  # noqa: BLE001
        return NO


def _to_bool(v):
    if v is True or v is False:
        return v
    if v is None:
        return False  # pybind11's bool caster takes None as False
    if getattr(type(v), "__bool__", None) is None:
        return NO  # (a list or a string has no truth value of its own)
    try:
        return bool(v)
    except Exception:  # noqa: BLE001
        return NO


_SCALAR_CONVERT = {"IntType": _to_int, "SymIntType": _to_int, "FloatType": _to_float,
                   "SymFloatType": _to_float, "BoolType": _to_bool, "SymBoolType": _to_bool}


def convert(value, t, as_tensors: bool = False, n=None):
    """``value`` as upstream's toIValue gives it for the JIT type ``t`` (``n``: a fixed list
    size), or ``NO``. ``as_tensors``: a Tensor parameter takes a Python number too (upstream
    wraps it for the operators ``should_allow_numbers_as_tensors`` lists)."""
    kind = t.kind()
    if kind == "OptionalType":
        return None if value is None else convert(value, t.getElementType(), as_tensors, n)
    fn = _SCALAR_CONVERT.get(kind)
    if fn is not None:
        return fn(value)
    if kind == "TensorType":
        ok = isinstance(value, TensorBase) or as_tensors and isinstance(value, numbers.Number)
        return value if ok else NO
    if kind == "NumberType":  # toIValue: Python's int and float, their subclasses, complex
        if type(value) in (int, float, bool, complex) or type(value).__name__ in ("dtype",
                                                                                  "layout"):
            return value
        if isinstance(value, int):
            return int(value)
        return float(value) if isinstance(value, float) else NO
    if kind == "ListType":
        elem = t.getElementType()
        each = _SCALAR_CONVERT.get(elem.kind())
        if not isinstance(value, (list, tuple)):
            # one value for a fixed-size int[N] or float[N] repeats (toIValue; not SymInt[N])
            floats = elem.kind() == "FloatType"
            if elem.kind() in ("IntType", "FloatType") and n and \
                    isinstance(value, float if floats else int):
                one = each(value)
                return NO if one is NO else [one] * n
            return NO
        if each is None:  # (tensors, optional tensors, ...: each as it is, in a list)
            if any(convert(v, elem) is NO for v in value):
                return NO
            return value if type(value) is list else list(value)
        out = [each(v) for v in value]
        if any(v is NO for v in out):
            return NO
        same = type(value) is list and all(a is b for a, b in zip(out, value))
        return value if same else out
    if kind == "TupleType":
        return value if isinstance(value, tuple) else NO
    if kind == "NoneType":
        return value if value is None else NO
    if kind == "StringType":
        return value if isinstance(value, str) else NO
    if kind == "ComplexType":
        return value if isinstance(value, numbers.Number) else NO
    if kind == "ScalarTypeType":
        return value if type(value).__name__ == "dtype" or value in (int, float, bool,
                                                                     complex) else NO
    if kind == "LayoutType":
        return value if type(value).__name__ == "layout" else NO
    if kind == "MemoryFormatType":
        return value if type(value).__name__ == "memory_format" else NO
    return value  # device/generator/...: accepted, the kernel validates


def _plan(schema) -> tuple:
    """What binding reads of a schema, read once: the number of positional parameters, the
    parameters' names, and each parameter's (name, kwarg-only, has a default, JIT type, N)."""
    plan = _PLANS.get(id(schema))
    if plan is None or plan[0] is not schema:
        params = schema.arguments
        plan = _PLANS[id(schema)] = (schema, sum(1 for a in params if not a.kwarg_only),
                                     frozenset(a.name for a in params),
                                     tuple((a.name, a.kwarg_only, a.has_default_value(),
                                            a.real_type, getattr(a, "N", None))
                                           for a in params))
    return plan


_PLANS: dict = {}  # id(schema) -> _plan (the schema kept, so an id is never reused under it)


def bind(schema, args: tuple, kwargs: dict, as_tensors: bool = False):
    """``(args, kwargs)`` converted for ``schema``, or None when the call does not bind to it."""
    _, n_positional, names, params = _plan(schema)
    if len(args) > n_positional or not names.issuperset(kwargs):
        return None
    out_args, out_kwargs = list(args), dict(kwargs)
    for i, (name, kwarg_only, has_default, t, n) in enumerate(params):
        positional = i < len(args) and not kwarg_only
        if positional:
            value = args[i]
        else:
            value = kwargs.get(name, _MISSING)
            if value is _MISSING:
                if has_default:
                    continue
                return None  # an optional argument without a default must be given, as upstream
        got = convert(value, t, as_tensors, n)
        if got is NO:
            return None
        if positional:
            out_args[i] = got
        else:
            out_kwargs[name] = got
    return tuple(out_args), out_kwargs


def numbers_as_tensors(qualname: str) -> bool:
    """upstream's opAllowsNumbersAsTensors: prims' operators, and aten's that
    should_allow_numbers_as_tensors lists (add, mul, div, to, ...)."""
    ns, _, name = qualname.partition("::")
    return ns in ("prims", "nvprims") or ns == "aten" and should_allow_numbers_as_tensors(name)


def describe_arguments(args, kwargs) -> str:
    """The argument types of a call, as upstream's binding errors print them."""
    parts = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def select_overload(overloads: dict, args: tuple, kwargs: dict):
    """For ``torch.ops.aten.foo(...)``: the first overload whose schema binds the arguments, and
    the call converted for it ``(op, args, kwargs)``."""
    name = next(iter(overloads.values())).qualname if overloads else "operator"
    as_tensors = numbers_as_tensors(name)
    for op in overloads.values():
        bound = bind(op.schema, args, kwargs, as_tensors)
        if bound is not None:
            return op, bound[0], bound[1]
    raise RuntimeError(f"{name}() Expected a value of a matching type for the arguments "
                       f"{describe_arguments(args, kwargs)}: no overload of {name} accepts them")
