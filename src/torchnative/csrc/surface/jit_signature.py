"""A scripted function's signature: its Decl read as TorchScript types, and the call contract.

Types: each parameter's type expression is resolved as TorchScript resolves it — its built-in
names first (``Tensor``, ``int``, ``number``...), the rest through the function's resolution
callback — then handed to upstream's ``torch.jit.annotations.ann_to_type``. A parameter without an
annotation is a Tensor. Calls: arguments are bound and converted as ``createStackForSchema`` and
``toIValue`` do (an int passed as ``float`` arrives as a float, a 0-dim tensor passed as ``int``
arrives as its value), and a value of the wrong type raises upstream's RuntimeError text.
"""

from __future__ import annotations

import numbers
import typing

from ..core.refuse import TorchnativeNotImplementedError
from ..ops.schema import Argument, _init_argument, _NO_DEFAULT
from .jit_tree_views import Decl, Select, StringLiteral, Subscript, TupleLiteral, Var

_PYBIND_CAST = ("Unable to cast Python instance of type {} to C++ type '?' (#define "
                "PYBIND11_DETAILED_ERROR_MESSAGES or compile in debug mode for details)")


def _builtin_names() -> dict:
    import torch
    return {"Tensor": torch.Tensor, "int": int, "float": float, "bool": bool, "str": str,
            "complex": complex, "None": None, "NoneType": type(None), "Any": typing.Any,
            "Device": torch.device, "List": typing.List, "Dict": typing.Dict,
            "Tuple": typing.Tuple, "Optional": typing.Optional, "Union": typing.Union}


def _annotation(expr, rcb):
    """The Python annotation object a type expression of the Decl names."""
    if isinstance(expr, Var):
        name = expr.name.name
        builtins = _builtin_names()
        if name in builtins:
            return builtins[name]
        obj = rcb(name)
        if obj is None:
            raise RuntimeError(f"Unknown type name '{name}':\n" + expr.range().highlight())
        return obj
    if isinstance(expr, Select):
        return getattr(_annotation(expr.value, rcb), expr.selector.name)
    if isinstance(expr, Subscript):
        base = _annotation(expr.value, rcb)
        args = tuple(_annotation(e, rcb) for e in expr.subscript_exprs)
        return base[args if len(args) > 1 else args[0]]
    if isinstance(expr, StringLiteral):
        from .jit_type_comment import parse_type_expr
        return _annotation(parse_type_expr(expr.value), rcb)
    if isinstance(expr, TupleLiteral) and not expr.elements:
        return ()
    if type(expr).__name__ == "NoneLiteral":
        return None
    raise TorchnativeNotImplementedError(
        "a TorchScript type expression of kind " + type(expr).__name__,
        "scripted signatures take names, attributes and subscripts as types")


def jit_type(expr, rcb, loc=None):
    import torch
    from torch.jit.annotations import ann_to_type
    if expr is None:
        return torch._C.TensorType.get()
    return ann_to_type(_annotation(expr, rcb), loc, rcb)


def signature(decl: Decl, rcb, defaults: dict, where) -> tuple[list, list | None]:
    """The schema arguments and returns TorchScript gives ``decl``; returns are None when the
    function has no return annotation (TorchScript infers that type from the compiled graph).
    ``where``: the Def's range, which a bad default's error shows."""
    args = []
    for p in decl.params:
        t = jit_type(p.type, rcb, p.range())
        check_convertible(t)
        pname = p.name.name
        default = _NO_DEFAULT
        if pname in defaults and isinstance(defaults[pname], (list, dict)):
            raise RuntimeError(
                "\nMutable default parameters are not supported because Python binds them to the "
                "function and they persist across function calls.\n As a workaround, make the "
                "default None and instantiate the default parameter within the body of the "
                f"function. Found {type(defaults[pname])} on parameter {pname}:\n"
                + where.highlight())
        if pname in defaults:
            try:
                default = convert(defaults[pname], t)
            except _CastError:
                raise RuntimeError(f"\nExpected a default value of type {t.annotation_str} on "
                                   f"parameter \"{pname}\".:\n" + where.highlight()) from None
        args.append(_init_argument(object.__new__(Argument), pname, t, t, None, default,
                                   p.kwarg_only, None))
    returns = None
    if decl.return_type is not None:
        t = jit_type(decl.return_type, rcb, decl.return_type.range())
        returns = [Argument("", t, None, None, False, None)]
    return args, returns


class _CastError(Exception):
    def __init__(self, detail: str, python_error: bool = False):
        super().__init__(detail)
        self.detail, self.python_error = detail, python_error


def _is_tensor(v) -> bool:
    import torch
    return isinstance(v, torch.Tensor)


def _scalar(v, want):
    """int/float/bool from a Python number, a numpy scalar or a 0-dim tensor, as pybind's casters
    accept them."""
    if _is_tensor(v):
        # a 0-dim tensor converts through its value; to int it truncates (1.5 -> 1)
        if v.dim() != 0:
            raise _CastError(_PYBIND_CAST.format(type(v)))
        return want(v.item())
    if want is bool:
        if v is None or isinstance(v, numbers.Number) and not isinstance(v, complex):
            return bool(v)
    elif want is int:
        if isinstance(v, numbers.Integral):
            return int(v)
    elif isinstance(v, numbers.Real):
        return float(v)
    raise _CastError(_PYBIND_CAST.format(type(v)))


def convert(v, t):
    """``toIValue(v, t)``: the value the scripted function receives, or _CastError."""
    kind = t.kind()
    if kind == "TensorType":
        if v is None or _is_tensor(v):
            return v
        raise _CastError(f"Unable to cast {v} to Tensor")
    if kind == "OptionalType":
        return None if v is None else convert(v, t.getElementType())
    if kind == "FloatType":
        return _scalar(v, float)
    if kind == "IntType":
        return _scalar(v, int)
    if kind == "BoolType":
        return _scalar(v, bool)
    if kind == "StringType":
        if isinstance(v, str):
            return v
        raise _CastError(_PYBIND_CAST.format(type(v)))
    if kind == "ListType":
        if not isinstance(v, (list, tuple)):
            raise _CastError(_PYBIND_CAST.format(type(v)))
        el = t.getElementType()
        try:
            if el.kind() in ("IntType", "FloatType", "BoolType"):
                # list elements go through the same casters, with one-element tensors as numbers
                return [convert(x.reshape(()) if _is_tensor(x) and x.numel() == 1 else x, el)
                        for x in v]
            return [convert(x, el) for x in v]
        except _CastError:
            raise _CastError(_PYBIND_CAST.format(type(v))) from None
    if kind == "TupleType":
        els = t.elements()
        try:
            items = list(v)
        except TypeError as e:
            raise _CastError(f"TypeError: {e}", python_error=True) from None
        if len(items) != len(els):
            raise _CastError(f"Object {v} had a different number of elements than type {t}")
        return tuple(convert(x, e) for x, e in zip(items, els))
    if kind == "DictType":
        try:  # the binding takes anything dict() takes
            d = dict(v)
        except (TypeError, ValueError) as e:
            raise _CastError(f"{type(e).__name__}: {e}", python_error=True) from None
        kt, vt = t.getKeyType(), t.getValueType()
        return {convert(k, kt): convert(x, vt) for k, x in d.items()}
    if kind == "DeviceObjType":
        import torch
        if isinstance(v, (torch.device, str)):
            return torch.device(v)
        raise _CastError(_PYBIND_CAST.format(type(v)))
    if kind == "AnyType":
        return v
    raise _unsupported(t)


_CONVERTED = {"TensorType", "FloatType", "IntType", "BoolType", "StringType", "DeviceObjType",
              "AnyType"}
_CONTAINERS = {"OptionalType": lambda t: [t.getElementType()], "ListType": lambda t: [t.getElementType()],
               "TupleType": lambda t: t.elements(),
               "DictType": lambda t: [t.getKeyType(), t.getValueType()]}


def _unsupported(t) -> TorchnativeNotImplementedError:
    return TorchnativeNotImplementedError(
        f"a scripted function's argument of TorchScript type {t}",
        "torchnative's TorchScript checks Tensor, int, float, bool, str, Device, Any and their "
        "Optional/List/Tuple/Dict")


def check_convertible(t) -> None:
    """Refuse at compile time, not at the first call, a parameter type ``convert`` cannot check."""
    kind = t.kind()
    if kind in _CONTAINERS:
        for inner in _CONTAINERS[kind](t):
            check_convertible(inner)
    elif kind not in _CONVERTED:
        raise _unsupported(t)


def type_error(fn_name: str, arg: Argument, pos: int, value, decl: str, err: _CastError,
               inferred: bool) -> RuntimeError:
    want = "Tensor (inferred)" if inferred else arg.type.annotation_str
    why = (f"Inferred '{arg.name}' to be of type 'Tensor' because it was not annotated with an "
           "explicit type.\n" if inferred else "")
    head = (f"{fn_name}() Expected a value of type '{want}' for argument '{arg.name}' but instead "
            f"found type '{type(value).__name__}'.\n{why}Position: {pos}\nValue: {value!r}\n"
            f"Declaration: {decl}\n")
    tail = (" Python error details: " if err.python_error else "Cast error details: ") + err.detail
    return RuntimeError(head + tail)


def bind(fn_name: str, arguments: list, inferred: set, decl: str, args: tuple, kwargs: dict):
    """``createStackForSchema``: positional and keyword values converted to the schema's types
    (``inferred``: the names of unannotated parameters, Tensors by inference)."""
    if len(args) + len(kwargs) > len(arguments):
        raise RuntimeError(f"{fn_name}() expected at most {len(arguments)} argument(s) but received "
                           f"{len(args) + len(kwargs)} argument(s). Declaration: {decl}")
    values = []

    def put(a, pos, v):
        try:
            values.append(convert(v, a.type))
        except _CastError as e:
            raise type_error(fn_name, a, pos, v, decl, e, a.name in inferred) from None

    for pos, (a, v) in enumerate(zip(arguments, args)):
        if a.kwarg_only:
            raise RuntimeError(f"{fn_name}() takes {pos} positional argument(s) but {len(args)} "
                               f"was/were given.  Declaration: {decl}")
        put(a, pos, v)
    used = 0
    for pos in range(len(args), len(arguments)):
        a = arguments[pos]
        if a.name in kwargs:
            put(a, pos, kwargs[a.name])
            used += 1
        elif a.has_default_value():
            values.append(a._default)
        else:
            raise RuntimeError(f"{fn_name}() is missing value for argument '{a.name}'. "
                               f"Declaration: {decl}")
    if used != len(kwargs):
        names = [a.name for a in arguments]
        for k in kwargs:
            if k not in names:
                raise RuntimeError(f"Unknown keyword argument '{k}' for operator '{fn_name}'. "
                                   f"Schema: {decl}")
            if names.index(k) < len(args):
                raise RuntimeError(f"Argument '{k}' specified both as positional and keyword "
                                   f"argument. Schema: {decl}")
    return values
