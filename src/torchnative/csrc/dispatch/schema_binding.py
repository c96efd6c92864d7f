"""Does a call bind to a schema? (for ``torch.ops.ns.op(...)`` picking an overload)

Upstream tries each overload's schema in order and takes the first whose arguments convert to
the schema's types (``getOpWithStack``, each value through ``toIValue``); we check the same:
counts, names, and each value against its argument's JIT type. A tensor of one element fills an
int argument as its item (``int_from_tensor``), read before the call as upstream's conversion
reads it; a Scalar argument takes Python's own numbers only (int, bool, float and their
subclasses, complex), not tensors nor numpy's integer and float32 scalars.
"""

from __future__ import annotations

import numbers

from ..core.tensor import TensorBase, numel_of
from ..ops.numbers_as_tensors import should_allow_numbers_as_tensors

_MISSING = object()


def _matches(value, t, as_tensors: bool = False) -> bool:
    """``as_tensors``: a Tensor parameter takes a Python number too (upstream converts it to a
    wrapped-number tensor for the operators ``should_allow_numbers_as_tensors`` lists)."""
    kind = t.kind()
    if kind == "OptionalType":
        return value is None or _matches(value, t.getElementType(), as_tensors)
    if kind == "TensorType":
        return isinstance(value, TensorBase) or as_tensors and isinstance(value, numbers.Number)
    if kind in ("IntType", "SymIntType"):
        return isinstance(value, numbers.Integral) and not isinstance(value, bool) or (
            isinstance(value, TensorBase) and numel_of(value) == 1)
    if kind in ("FloatType", "SymFloatType"):
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if kind in ("BoolType", "SymBoolType"):
        return isinstance(value, bool)
    if kind == "NumberType":  # (toIValue: Python's int and float, their subclasses, complex)
        return isinstance(value, (int, float)) or type(value) is complex or \
            type(value).__name__ in ("dtype", "layout")
    if kind == "ComplexType":
        return isinstance(value, numbers.Number)
    if kind == "StringType":
        return isinstance(value, str)
    if kind == "ListType":
        if not isinstance(value, (list, tuple)):
            return False
        elem = t.getElementType()
        return all(_matches(v, elem) for v in value)
    if kind == "TupleType":
        return isinstance(value, tuple)
    if kind == "NoneType":
        return value is None
    if kind == "ScalarTypeType":
        return type(value).__name__ == "dtype" or value in (int, float, bool, complex)
    if kind == "LayoutType":
        return type(value).__name__ == "layout"
    if kind == "MemoryFormatType":
        return type(value).__name__ == "memory_format"
    return True  # dtype/layout/device/generator/... : accepted, the kernel validates


def binds(schema, args: tuple, kwargs: dict, as_tensors: bool = False) -> bool:
    params = schema.arguments
    positional = [a for a in params if not a.kwarg_only]
    if len(args) > len(positional):
        return False
    names = {a.name for a in params}
    if any(k not in names for k in kwargs):
        return False
    for i, a in enumerate(params):
        if i < len(args) and not a.kwarg_only:
            value = args[i]
        else:
            value = kwargs.get(a.name, _MISSING)
            if value is _MISSING:
                if a.has_default_value():
                    continue
                return False  # an optional argument without a default must be given, as upstream
        if not _matches(value, a.real_type, as_tensors):
            return False
    return True


def numbers_as_tensors(qualname: str) -> bool:
    """upstream's opAllowsNumbersAsTensors: prims' operators, and aten's that
    should_allow_numbers_as_tensors lists (add, mul, div, to, ...)."""
    ns, _, name = qualname.partition("::")
    return ns in ("prims", "nvprims") or ns == "aten" and should_allow_numbers_as_tensors(name)


def describe_arguments(args, kwargs) -> str:
    """The argument types of a call, as upstream's binding errors print them."""
    parts = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
    return "(" + ", ".join(parts) + ")"


def int_from_tensor(schema, args: tuple, kwargs: dict) -> tuple:
    """The positions (ints) and keyword names of the int arguments of ``schema`` that a tensor
    fills in this call: upstream converts each to its item before the call (its
    ``_local_scalar_dense`` dispatched), so modes and the kernel see a Python int."""
    found = []
    for i, a in enumerate(schema.arguments):
        t = a.real_type
        if t.kind() == "OptionalType":
            t = t.getElementType()
        if t.kind() not in ("IntType", "SymIntType"):
            continue
        if i < len(args) and not a.kwarg_only:
            if isinstance(args[i], TensorBase):
                found.append(i)
        elif isinstance(kwargs.get(a.name), TensorBase):
            found.append(a.name)
    return tuple(found)


def select_overload(overloads: dict, args: tuple, kwargs: dict):
    """For ``torch.ops.aten.foo(...)``: the first overload whose schema binds the arguments."""
    name = next(iter(overloads.values())).qualname if overloads else "operator"
    as_tensors = numbers_as_tensors(name)
    for op in overloads.values():
        if binds(op.schema, args, kwargs, as_tensors):
            return op
    raise RuntimeError(f"{name}() Expected a value of a matching type for the arguments "
                       f"{describe_arguments(args, kwargs)}: no overload of {name} accepts them")
