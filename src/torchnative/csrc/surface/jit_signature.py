"""A scripted function's signature: its Decl read as TorchScript types, and the call contract.

Types: each parameter's type expression is resolved as TorchScript resolves it — its built-in
names first (``Tensor``, ``int``, ``number``...), the rest through the function's resolution
callback — then handed to upstream's ``torch.jit.annotations.ann_to_type``. A parameter without an
annotation is a Tensor. Calls: arguments are bound and converted as ``createStackForSchema`` and
``toIValue`` do (an int passed as ``float`` arrives as a float, a 0-dim tensor passed as ``int``
arrives as its value), and a value of the wrong type raises upstream's RuntimeError text.
"""

from __future__ import annotations

import typing

from ..core.refuse import TorchnativeNotImplementedError
from ..ops.schema import Argument, _init_argument, _NO_DEFAULT
from .jit_tree_views import BinOp, Decl, Select, StringLiteral, Subscript, TupleLiteral, Var

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
    if isinstance(expr, BinOp) and expr.kind == "|":  # PEP 604: ``Tensor | None``
        return typing.Union[_annotation(expr.lhs, rcb), _annotation(expr.rhs, rcb)]
    raise TorchnativeNotImplementedError(
        "a TorchScript type expression of kind " + type(expr).__name__,
        "scripted signatures take names, attributes, subscripts and X | Y as types")


def jit_type(expr, rcb, loc=None):
    import torch
    from torch.jit.annotations import ann_to_type
    if expr is None:
        return torch._C.TensorType.get()
    return ann_to_type(_annotation(expr, rcb), loc, rcb)


def signature(decl: Decl, rcb, defaults: dict, where) -> tuple[list, list | None, list]:
    """The schema arguments and returns TorchScript gives ``decl``, and each argument's converter;
    returns are None when the function has no return annotation (TorchScript infers that type from
    the compiled graph). ``where``: the Def's range, which a bad default's error shows."""
    args, casts = [], []
    for p in decl.params:
        t = jit_type(p.type, rcb, p.range())
        cast = converter(t)
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
                default = cast(defaults[pname])
            except _CastError:
                raise RuntimeError(f"\nExpected a default value of type {t.annotation_str} on "
                                   f"parameter \"{pname}\".:\n" + where.highlight()) from None
        casts.append(cast)
        args.append(_init_argument(object.__new__(Argument), pname, t, t, None, default,
                                   p.kwarg_only, None))
    returns = None
    if decl.return_type is not None:
        t = jit_type(decl.return_type, rcb, decl.return_type.range())
        returns = [Argument("", t, None, None, False, None)]
    return args, returns, casts


class _CastError(Exception):
    def __init__(self, detail: str, python_error: bool = False):
        super().__init__(detail)
        self.detail, self.python_error = detail, python_error


def _scalar(want, tensor_cls):
    """The caster for int/float/bool, as pybind's casters convert: a tensor through its value
    (0-dim only; to int it truncates), int from anything ``int()`` takes but a Python float, float
    from anything ``float()`` takes, bool from anything with ``__bool__`` and from None."""
    fast = {int: (int, bool), float: (float, int, bool), bool: (bool, int, float)}[want]
    hook = {int: ("__int__", "__index__"), float: ("__float__", "__index__"), bool: ("__bool__",)}[want]

    import torch
    # TorchScript's int is also its dtype, layout, memory format and qscheme (a ``torch.dtype``
    # annotation is ``int``): the Python body receives the object, which its operators take
    enums = (torch.dtype, torch.layout, torch.memory_format, torch.qscheme) if want is int else ()

    def cast(v):
        if type(v) in fast:
            return want(v)
        if isinstance(v, enums):
            return v
        if isinstance(v, tensor_cls):
            if v.dim() != 0:
                raise _CastError(_PYBIND_CAST.format(type(v)))
            return want(v.item())
        if want is bool and v is None:
            return False
        if not (want is int and isinstance(v, float)) and any(hasattr(type(v), h) for h in hook):
            return want(v)
        raise _CastError(_PYBIND_CAST.format(type(v)))
    return cast


def converter(t):
    """``toIValue(·, t)`` as a function of the value: what the scripted function receives, or
    _CastError. Built once per parameter; a type it cannot check refuses here."""
    import torch
    tensor = torch.Tensor
    kind = t.kind()
    if kind == "TensorType":
        def cast(v):
            if isinstance(v, tensor):
                return v
            if v is None:
                raise TorchnativeNotImplementedError(
                    "None for a (non-Optional) Tensor parameter of a scripted function",
                    "TorchScript passes an undefined tensor, which is not None in its code and "
                    "which the Python body torchnative runs cannot receive; annotate "
                    "Optional[Tensor]")
            raise _CastError(f"Unable to cast {v} to Tensor")
        return cast
    if kind == "OptionalType":
        inner = converter(t.getElementType())
        return lambda v: None if v is None else inner(v)
    if kind in ("FloatType", "IntType", "BoolType"):
        return _scalar({"FloatType": float, "IntType": int, "BoolType": bool}[kind], tensor)
    if kind == "StringType":
        def cast(v):
            if isinstance(v, str):
                return v
            raise _CastError(_PYBIND_CAST.format(type(v)))
        return cast
    if kind == "ListType":
        el = converter(t.getElementType())
        numeric = t.getElementType().kind() in ("IntType", "FloatType", "BoolType")

        def cast(v):
            if not isinstance(v, (list, tuple)):
                raise _CastError(_PYBIND_CAST.format(type(v)))
            try:
                if numeric:  # one-element tensors count as numbers here
                    return [el(x.reshape(()) if isinstance(x, tensor) and x.numel() == 1 else x)
                            for x in v]
                return [el(x) for x in v]
            except _CastError:
                raise _CastError(_PYBIND_CAST.format(type(v))) from None
        return cast
    if kind == "TupleType":
        els = [converter(e) for e in t.elements()]

        def cast(v):
            try:
                items = list(v)
            except TypeError as e:
                raise _CastError(f"TypeError: {e}", python_error=True) from None
            if len(items) != len(els):
                raise _CastError(f"Object {v} had a different number of elements than type {t}")
            return tuple(c(x) for c, x in zip(els, items))
        return cast
    if kind == "DictType":
        kc, vc = converter(t.getKeyType()), converter(t.getValueType())

        def cast(v):
            try:  # the binding takes anything dict() takes
                d = dict(v)
            except (TypeError, ValueError) as e:
                raise _CastError(f"{type(e).__name__}: {e}", python_error=True) from None
            return {kc(k): vc(x) for k, x in d.items()}
        return cast
    if kind == "DeviceObjType":
        def cast(v):
            if isinstance(v, (torch.device, str)):
                return torch.device(v)
            raise _CastError(_PYBIND_CAST.format(type(v)))
        return cast
    if kind == "AnyType":
        return lambda v: v
    raise _unsupported(t)


def _unsupported(t) -> TorchnativeNotImplementedError:
    return TorchnativeNotImplementedError(
        f"a scripted function's argument of TorchScript type {t}",
        "torchnative's TorchScript checks Tensor, int, float, bool, str, Device, Any and their "
        "Optional/List/Tuple/Dict")


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


class CallContract:
    """``createStackForSchema`` for one scripted function: positional and keyword values bound to
    the schema's arguments and converted to their types, or upstream's error. ``inferred``: the
    names of unannotated parameters (Tensors by inference); ``decl``: the declaration errors show."""

    def __init__(self, fn_name: str, arguments: list, casts: list, inferred: set, decl: str):
        self.fn_name, self.arguments, self.casts, self.decl = fn_name, arguments, casts, decl
        self.inferred = inferred
        self.names = [a.name for a in arguments]
        self.kwonly = [a.kwarg_only for a in arguments]
        self.defaults = [a._default for a in arguments]

    def _cast(self, pos: int, v):
        try:
            return self.casts[pos](v)
        except _CastError as e:
            a = self.arguments[pos]
            raise type_error(self.fn_name, a, pos, v, self.decl, e, a.name in self.inferred) from None

    def bind(self, args: tuple, kwargs: dict) -> list:
        n, fn_name, decl = len(self.names), self.fn_name, self.decl
        if len(args) + len(kwargs) > n:
            raise RuntimeError(f"{fn_name}() expected at most {n} argument(s) but received "
                               f"{len(args) + len(kwargs)} argument(s). Declaration: {decl}")
        values = []
        for pos, v in enumerate(args):
            if self.kwonly[pos]:
                raise RuntimeError(f"{fn_name}() takes {pos} positional argument(s) but {len(args)} "
                                   f"was/were given.  Declaration: {decl}")
            values.append(self._cast(pos, v))
        used = 0
        for pos in range(len(args), n):
            name = self.names[pos]
            if name in kwargs:
                values.append(self._cast(pos, kwargs[name]))
                used += 1
            elif self.defaults[pos] is not _NO_DEFAULT:
                values.append(self.defaults[pos])
            else:
                raise RuntimeError(f"{fn_name}() is missing value for argument '{name}'. "
                                   f"Declaration: {decl}")
        if used != len(kwargs):
            for k in kwargs:
                if k not in self.names:
                    raise RuntimeError(f"Unknown keyword argument '{k}' for operator '{fn_name}'. "
                                       f"Schema: {decl}")
                if self.names.index(k) < len(args):
                    raise RuntimeError(f"Argument '{k}' specified both as positional and keyword "
                                       f"argument. Schema: {decl}")
        return values
