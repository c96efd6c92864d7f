"""Python argument parsing for operator spellings, as upstream's PythonArgParser does it.

Signatures come from upstream's binding table (spellings_table); each is tried in order
(deprecated ones last) and the first that accepts the arguments wins, with upstream's rules:
varargs int lists (``x.view(2, 3)``), numbers bound to Tensor parameters only for the
arithmetic ops upstream allows, numpy-style keyword aliases (``axis``, ``keepdims``), ``None``
for optional parameters. The winning signature names the overload to call (its ``out=`` overload
when ``out`` is given); arguments are handed to the door in the schema's convention: positional
for positional schema arguments, keywords for keyword-only ones.
"""

from __future__ import annotations

import numbers
import operator

import numpy as np

from . import call_cache as _call_cache
from .call_cache import NOT_SEQUENCES, _is_int
from .results import named as _named
from ..dispatch import door
from ..dispatch.call import op as _op
from .invalid_arguments import format_invalid_args, tp_name
from ..core.construct import wrapped_number as _wrapped_number
from ..core.device import CPU
from ..core.tensor import TensorBase as _TensorBase, set_requires_grad as _set_requires_grad
from ..core.torch_function import TLS as _TF_TLS, _has_attr_override
from ..core.torch_function import called_by_torch_c, overridable_arguments, \
    wants_torch_function as _wants_torch_function

NUMBERS_AS_TENSORS = frozenset({
    "add", "add_", "add_out", "div", "div_", "div_out", "divide", "divide_", "divide_out",
    "mul", "mul_", "mul_out", "multiply", "multiply_", "multiply_out", "sub", "sub_", "sub_out",
    "subtract", "subtract_", "subtract_out", "true_divide", "true_divide_", "true_divide_out",
    "to", "_to_copy", "copy_", "copy", "floor_divide", "floor_divide_", "floor_divide_out",
    "_conj"})
NUMPY_NAMES = {"dim": ("axis",), "keepdim": ("keepdims",), "input": ("x", "a", "x1"),
               "other": ("x2",)}
_MISSING = object()


class _NoMatch(Exception):
    """A signature does not accept the call. The message is built only if it is shown: trying
    signatures in turn is the common case and must not format strings."""

    def __init__(self, message):
        super().__init__()
        self._message = message

    def __str__(self):
        m = self._message
        return m() if callable(m) else m


_SYMBOLIC = {"SymInt": 7777777, "SymFloat": 7777777.0, "SymBool": True}


def is_symbolic(obj) -> bool:
    """A torch.SymInt, SymFloat or SymBool (known by name: they live above this layer)."""
    return type(obj).__name__ in _SYMBOLIC


def _is_scalar(obj) -> bool:
    """THPUtils_checkScalar: a Python or numpy number (a numpy bool included), or a symbolic
    one."""
    return isinstance(obj, (numbers.Number, np.bool_)) or is_symbolic(obj)


def _numpy_number(obj):
    """A numpy scalar read as PythonArgs::scalar_slow reads it: an integer as an int (one past
    int64 fails as the unsigned read of a non-int fails); a complex128 (a Python complex) as a
    complex; anything else through its ``__float__`` (a bool as 0.0 or 1.0, a complex64 as its
    real part, with numpy's warning)."""
    if isinstance(obj, np.integer):
        v = int(obj)
        if not -2 ** 63 <= v < 2 ** 63:
            raise TypeError("an integer is required")
        return v
    if isinstance(obj, complex):
        return complex(obj)
    return float(obj)


def _tensor_like(obj) -> bool:
    return not isinstance(obj, (numbers.Number, str, list, tuple)) and obj is not None and \
        _has_attr_override(obj)


def _zero_dim_ok(obj, integral: bool) -> bool:
    if not isinstance(obj, _TensorBase) or obj.dim() != 0 or obj.requires_grad:
        return False
    return not integral or (not obj.dtype.is_floating_point and not obj.dtype.is_complex
                            and obj.dtype.__reduce__() != "bool")


def _one_int(obj) -> bool:
    """A one-element integer (or bool) tensor of any shape stands for a one-int size list, as
    upstream's parser allows (``t.resize_(torch.LongTensor([n]))``)."""
    return (isinstance(obj, _TensorBase) and obj.numel() == 1 and not obj.requires_grad
            and not obj.dtype.is_floating_point and not obj.dtype.is_complex)


class _Unpack(Exception):
    """An int list's element (after the first, which the check read) that is not an int."""

    def __init__(self, index: int, obj):
        super().__init__(index, obj)
        self.index, self.obj = index, obj


class _NotTensor(Exception):
    """A tensor list's element that is not a tensor: upstream's check raises at once
    (is_tensor_list_and_append_overloaded with throw_error), no other signature is tried."""

    def __init__(self, param: "Param", index: int, obj):
        super().__init__(index, obj)
        self.param, self.index, self.obj = param, index, obj


def _list_int(obj, index: int):
    """An int list's element as upstream unpacks it: an int (a bool too), a symbolic int, a
    one-element integer tensor (a bool one is refused as its Scalar is read), or whatever
    ``__index__`` makes an int (numpy integers)."""
    if type(obj).__name__ == "SymInt":
        return obj
    if isinstance(obj, _TensorBase):
        if _one_int(obj):
            return _size_int(obj)
        raise _Unpack(index, obj)
    try:
        return operator.index(obj)
    except Exception:
        raise _Unpack(index, obj) from None


def _size_int(obj) -> int:
    """A one-element tensor read as a size: its Scalar must be integral, bool not included."""
    if isinstance(obj, _TensorBase) and obj.dtype.__reduce__() == "bool":
        raise RuntimeError("Expected scalar.isIntegral( false) to be true, but got false. "
                           " (Could this error message be improved?  If so, please report "
                           "an enhancement request to PyTorch.)")
    return int(obj)


def _checker(p: "Param"):
    """PythonArgParser's FunctionParameter::check, specialised once for the parameter's kind."""
    T = _TensorBase
    k, size, numbers_ok = p.kind, p.size, p.numbers_ok
    if k == "Tensor":
        # a tensor-like (any object whose type has __torch_function__) is accepted too, to be
        # handed to its __torch_function__ (upstream's is_tensor_and_append_overloaded)
        if numbers_ok:
            def fn(obj):
                return isinstance(obj, T) or _is_scalar(obj) or _tensor_like(obj)
        else:
            def fn(obj):
                return isinstance(obj, T) or _tensor_like(obj)
    elif k == "Scalar":
        def fn(obj):
            return _is_scalar(obj) or _zero_dim_ok(obj, False)
    elif k in ("double", "complex"):
        real_only = k == "double"

        def fn(obj):
            if isinstance(obj, np.generic):  # any numpy number (bool, complex too) reads
                return isinstance(obj, (np.number, np.bool_))  # through __float__/__complex__
            if isinstance(obj, numbers.Number):
                return not real_only or isinstance(obj, numbers.Real)
            return _zero_dim_ok(obj, False)
    elif k in ("int64_t", "SymInt"):
        def fn(obj):
            return _is_int(obj) or _zero_dim_ok(obj, True)
    elif k == "bool":
        def fn(obj):
            return isinstance(obj, bool) or type(obj).__name__ == "bool_"
    elif k in ("IntArrayRef", "SymIntArrayRef"):
        def fn(obj):
            if isinstance(obj, (tuple, list)):
                return len(obj) == 0 or _is_int(obj[0]) or _zero_dim_ok(obj[0], True)
            # a lone int (or one-element integral tensor) only where the list has a size;
            # elsewhere it reaches a list parameter through varargs alone, so a Tensor overload
            # after it still gets a 0-dim tensor (tensor_split's sections)
            return size > 0 and (_is_int(obj) or _zero_dim_ok(obj, True) or _one_int(obj))
    elif k in ("TensorList", "c10::List<::std::optional<Tensor>>"):
        # (None is no tensor here either: only operators called through torch.ops take
        # an optional tensor list's holes)
        def fn(obj):
            if not isinstance(obj, (tuple, list)):
                return False
            for i, o in enumerate(obj):
                if not (isinstance(o, T) or _tensor_like(o)):
                    raise _NotTensor(p, i, o)
            return True
    elif k == "ArrayRef<double>":
        def fn(obj):
            return isinstance(obj, (tuple, list)) and all(isinstance(o, numbers.Number)
                                                          for o in obj)
    elif k == "ScalarType":
        from ..core.dtypes import dtype

        def fn(obj):
            # (by identity: ``in`` would compare a tensor with each type through its __eq__)
            return isinstance(obj, dtype) or obj is int or obj is float or obj is bool or \
                obj is complex
    elif k == "Device":
        from ..core.device import device

        def fn(obj):
            return _is_int(obj) or isinstance(obj, (str, device))
    elif k in ("std::string", "c10::string_view"):
        def fn(obj):
            return isinstance(obj, str)
    elif k in ("Layout", "MemoryFormat", "QScheme"):
        from ..core import layouts

        cls = layouts.CLASSES[k]

        def fn(obj):
            return isinstance(obj, cls)
    elif k == "Generator":
        from ..core.generator import Generator

        def fn(obj):
            return isinstance(obj, Generator)
    elif k == "Dimname":
        def fn(obj):
            return isinstance(obj, str) or obj is None
    elif k == "DimnameList":
        def fn(obj):
            return (isinstance(obj, (list, tuple)) and all(isinstance(o, str) for o in obj)) or (
                size == 1 and isinstance(obj, str))
    elif k in ("ScalarList", "at::ArrayRef<at::Scalar>"):
        def fn(obj):
            return isinstance(obj, (tuple, list)) and all(_is_scalar(o) for o in obj)
    elif k == "Storage":
        from ..core.storage import is_storage as fn  # typed storages too
    elif k == "Stream":
        def fn(obj):
            return type(obj).__name__ == "Stream"
    elif k == "PyObject*":
        def fn(obj):
            return True
    else:
        def fn(obj):
            return False
    return fn


# kinds whose parsed value is the object itself (no conversion step on the hot path)
_IDENTITY_KINDS = frozenset(("bool", "std::string", "c10::string_view", "Layout", "MemoryFormat",
                             "QScheme", "Generator", "Dimname", "DimnameList", "Storage", "Stream",
                             "PyObject*", "TensorList", "c10::List<::std::optional<Tensor>>",
                             "ArrayRef<double>", "ScalarList", "at::ArrayRef<at::Scalar>"))


class Param:
    __slots__ = ("name", "kind", "allow_none", "size", "default", "default_text", "kwarg_only",
                 "role", "aliases", "numbers_ok", "check", "needs_convert")

    def __init__(self, arg, numbers_ok: bool, method: bool = True):
        t = arg.type
        self.allow_none = t.endswith("?") or arg.default == "None"
        t = t.rstrip("?")
        self.size = 0
        if "[" in t:
            t, _, n = t.partition("[")
            self.size = int(n.rstrip("]")) if n.rstrip("]") else 0
        self.kind = t
        # torchgen's PythonArgument.argument_str: a function's Tensor `self` is spelled `input`
        # (a Scalar `self`, as pow's, keeps its name)
        self.name = "input" if arg.name == "self" and not method and t == "Tensor" else arg.name
        self.default = _parse_default(self.kind, arg.default, self.size)
        self.default_text = arg.default
        self.kwarg_only = arg.kwarg_only
        self.role = arg.role
        self.aliases = NUMPY_NAMES.get(self.name, ())
        self.numbers_ok = numbers_ok
        self.check = _checker(self)
        self.needs_convert = self.kind not in _IDENTITY_KINDS

    @property
    def optional(self) -> bool:
        return self.default is not _MISSING

    def convert(self, obj):
        k = self.kind
        if k == "Tensor":
            if isinstance(obj, _TensorBase) or not _is_scalar(obj):
                return obj  # a tensor, or a tensor-like for __torch_function__
            sym = _SYMBOLIC.get(type(obj).__name__)
            if sym is not None:
                # as upstream's parser: a stand-in wrapped number that carries the symbolic
                # value, which __torch_dispatch__ receives back in its place
                t = _wrapped_number(sym)
                t._tn_wrapped_number = obj
                return t
            return _wrapped_number(_numpy_number(obj) if isinstance(obj, np.generic) else obj)
        if k == "Scalar":
            return obj.item() if isinstance(obj, _TensorBase) else \
                _numpy_number(obj) if isinstance(obj, np.generic) else obj
        if k in ("int64_t", "SymInt"):
            return int(obj) if isinstance(obj, (_TensorBase, np.integer)) else obj
        if k in ("double",):
            return obj.item() if isinstance(obj, _TensorBase) else \
                float(obj) if isinstance(obj, np.generic) else obj
        if k in ("IntArrayRef", "SymIntArrayRef"):
            if isinstance(obj, (tuple, list)):
                return [o if type(o) is int else _list_int(o, i) for i, o in enumerate(obj)]
            return [_size_int(obj)] * max(self.size, 1)
        if k == "ScalarType" and (obj is int or obj is float or obj is bool or obj is complex):
            from ..core import dtypes

            return dtypes.PYTHON_TYPE_DTYPE[obj]
        if k == "Device" and not type(obj).__name__ == "device":
            from ..core.device import device

            if not _is_int(obj):
                return device(obj)
            index = operator.index(obj)  # an index names the accelerator's
            if index < 0:
                raise RuntimeError("Device index must not be negative")
            return device(index)
        return obj

    def python_default(self):
        return None if self.default is _MISSING else self.default


def _atol(text: str) -> int:
    """C's atol, which upstream's PythonArgParser applies to int defaults: a non-numeric default
    such as ``at::Reduction::Mean`` reads as 0 (so ``torch._C._nn.mse_loss(a, b)`` reduces with
    'none' upstream; F.mse_loss always passes ``reduction`` explicitly)."""
    import re

    m = re.match(r"\s*[+-]?\d+", text)
    return int(m.group()) if m else 0


def _parse_default(kind: str, text: str | None, size: int):
    if text is None:
        return _MISSING
    if text == "None":
        return None
    if kind in ("int64_t", "SymInt"):
        return _atol(text)
    if kind == "bool":
        return text in ("True", "true")
    if kind in ("double", "complex"):
        return float(text)
    if kind == "Scalar":
        try:
            return int(text, 0)
        except ValueError:
            return float(text)
    if kind in ("IntArrayRef", "SymIntArrayRef"):
        if text.startswith("{"):
            return [int(x) for x in text[1:-1].split(",") if x]
        return [int(text)] * size
    if kind == "ScalarType":
        from ..core import dtypes

        return dtypes.BY_NAME[text.split(".")[-1]]
    if kind == "Layout":
        from ..core import layouts

        return layouts.BY_NAME[text.split(".")[-1]]
    if kind in ("std::string", "c10::string_view"):
        import ast

        return ast.literal_eval(text)
    return None


class Signature:
    """A compiled PythonArgParser signature and the overloads it calls."""

    __slots__ = ("name", "params", "max_pos", "min_args", "varargs", "base", "outplace",
                 "deprecated", "method", "text", "_maps", "out_index")

    def __init__(self, sig, name: str):
        numbers_ok = name in NUMBERS_AS_TENSORS
        self.name = name
        self.params = [Param(a, numbers_ok, sig.method) for a in sig.args]
        self.max_pos = sum(not p.kwarg_only for p in self.params)
        self.min_args = sum(not p.optional for p in self.params)
        self.varargs = self.max_pos == 1 and self.params[0].kind in ("IntArrayRef",
                                                                      "SymIntArrayRef")
        self.base, self.outplace = sig.base, sig.outplace
        self.deprecated, self.method, self.text = sig.deprecated, sig.method, sig.text
        self._maps: dict[bool, _Plan] = {}
        self.out_index = next((i for i, p in enumerate(self.params) if p.role == "out"), None)

    def parse(self, args: tuple, kwargs: dict) -> list:
        nargs = len(args)
        if nargs > self.max_pos and not (self.varargs and (_is_int(args[0]) or _one_int(args[0]))):
            # (an int list may come as the positional arguments themselves if the first is one)
            raise _NoMatch(lambda: self._extra_args(nargs))
        out = []
        convert = []  # upstream converts only once the whole signature has matched
        pos = 0
        remaining = len(kwargs)
        for p in self.params:
            is_kwd = False
            obj = _MISSING
            if pos < nargs:
                if p.kwarg_only:
                    raise _NoMatch(lambda: self._extra_args(nargs))
                obj = args[pos]
            elif kwargs:
                obj = kwargs.get(p.name, _MISSING)
                for alias in p.aliases:
                    if obj is not _MISSING:
                        break
                    obj = kwargs.get(alias, _MISSING)
                is_kwd = True
            if (obj is _MISSING and p.optional) or (obj is None and p.allow_none):
                out.append(p.python_default() if obj is _MISSING else None)
            elif obj is _MISSING:
                raise _NoMatch(lambda i=len(out): self._missing_args(i))
            elif self.varargs and pos == 0 and not is_kwd and (nargs > 1 or not p.check(obj)) \
                    and (_is_int(args[0]) or _one_int(args[0])):
                # the call's positional arguments are the list (upstream checks the first)
                out.append(args)
                convert.append((len(out) - 1, p))
                pos = nargs
                continue
            elif p.check(obj):
                if p.needs_convert:
                    convert.append((len(out), p))
                out.append(obj)
            else:
                raise _NoMatch(lambda p=p, is_kwd=is_kwd, pos=pos, obj=obj: (
                    f"{self.name}(): argument '{p.name}'"
                    + ("" if is_kwd else f" (position {pos + 1})")
                    + f" must be {_TYPE_NAMES.get(p.kind, p.kind)}, "
                    + (f"but found element of type {tp_name(obj[0])} at pos 0"
                       if not is_kwd and p.kind in _INT_LISTS and isinstance(obj, (tuple, list))
                       and obj else f"not {tp_name(obj)}")))
            if not is_kwd:
                pos += 1
            elif obj is not _MISSING:
                remaining -= 1
        if remaining > 0:
            raise _NoMatch(lambda: self._extra_kwargs(kwargs, nargs))
        for i, p in convert:
            try:
                out[i] = p.convert(out[i])
            except _Unpack as e:  # the signature matched: no other is tried
                raise TypeError(
                    f"{self.name}(): argument '{p.name}' failed to unpack the object at pos "
                    f"{e.index + 1} with error \"type must be tuple of ints,but got "
                    f"{tp_name(e.obj)}\"") from None
        return out

    # PythonArgParser's messages for a call this signature cannot take
    def _extra_args(self, nargs: int) -> str:
        lo, hi = self.min_args, self.max_pos
        if lo != hi:
            return f"{self.name}() takes from {lo} to {hi} positional arguments but {nargs} were given"
        return (f"{self.name}() takes {hi} positional argument{'' if hi == 1 else 's'} but "
                f"{nargs} {'was' if nargs == 1 else 'were'} given")

    def _missing_args(self, i: int) -> str:
        names = [f'"{p.name}"' for p in self.params[i:] if not p.optional]
        # (upstream's plural is the other way round)
        return (f"{self.name}() missing {len(names)} required positional argument"
                f"{'s' if len(names) == 1 else ''}: {', '.join(names)}")

    def _extra_kwargs(self, kwargs: dict, nargs: int) -> str:
        for k in kwargs:
            i = next((i for i, p in enumerate(self.params) if p.name == k), -1)
            if i < 0:
                return f"{self.name}() got an unexpected keyword argument '{k}'"
            if i < nargs:
                return f"{self.name}() got multiple values for argument '{k}'"
        return "invalid keyword arguments"

    @property
    def printed(self) -> str:
        """FunctionSignature::toString: ``(Tensor other, *, Number alpha = 1)``."""
        parts, starred = [], False
        for p in self.params:
            if p.kwarg_only and not starred:
                parts.append("*")
                starred = True
            text = f"{_TYPE_NAMES.get(p.kind, p.kind)} {p.name}"
            parts.append(text if p.default_text is None else f"{text} = {p.default_text}")
        return "(" + ", ".join(parts) + ")"

    def plan(self, with_out: bool) -> "_Plan":
        plan = self._maps.get(with_out)
        if plan is None:
            plan = self._maps[with_out] = _Plan(self, with_out)
        return plan

    def target(self, values: list, self_tensor=None):
        """(operator handle, schema args, schema kwargs, python-only options) for a parse."""
        out_value = values[self.out_index] if self.out_index is not None else None
        plan = self.plan(out_value is not None)
        positional = list(plan.template)
        if self_tensor is not None and plan.self_pos is not None:
            positional[plan.self_pos] = self_tensor
        for vi, pi in plan.to_positional:
            positional[pi] = values[vi]
        keyword = {name: values[vi] for vi, name in plan.to_keyword}
        if out_value is not None:
            outs = plan.out_names
            vals = out_value if len(outs) > 1 else (out_value,)
            if len(vals) != len(outs):
                raise TypeError(f"{self.name}(): out must be a tuple of {len(outs)} tensors")
            for n, ov in zip(outs, vals):
                keyword[n] = ov
        options = {name: values[vi] for vi, name in plan.options} if plan.options else _NO_OPTIONS
        if plan.options_filled:
            # upstream's binding resolves TensorOptions: pin_memory defaults to False, and for
            # factories without a tensor to take options from, the device to cpu
            if plan.factory and keyword.get("device") is None:
                keyword["device"] = CPU
            if keyword.get("pin_memory") is None:
                keyword["pin_memory"] = False
        return plan.op, tuple(positional), keyword, options


_NO_OPTIONS: dict = {}


class _Plan:
    """How one signature's parsed values land in one overload's schema arguments."""

    __slots__ = ("op", "template", "self_pos", "to_positional", "to_keyword", "out_names",
                 "options", "factory", "options_filled")

    def __init__(self, sig: Signature, with_out: bool):
        name = sig.outplace if (with_out and sig.outplace) else sig.base
        self.op = op = _op(name)
        schema_args = op.schema.arguments
        by_name = {a.name: (i, a) for i, a in enumerate(schema_args)}
        n_pos = sum(1 for a in schema_args if not a.kwarg_only)
        self.template = [a.default_value if a.has_default_value() else None
                         for a in schema_args[:n_pos]]
        self.self_pos = by_name["self"][0] if sig.method and "self" in by_name else None
        self.to_positional, self.to_keyword, self.options = [], [], []
        for vi, p in enumerate(sig.params):
            if p.role == "out":
                continue
            target = "self" if p.name == "input" and "input" not in by_name else p.name
            if target not in by_name:
                self.options.append((vi, p.name))  # e.g. requires_grad: applied after the call
                continue
            i, a = by_name[target]
            if a.kwarg_only:
                self.to_keyword.append((vi, a.name))
            else:
                self.to_positional.append((vi, i))
        self.out_names = [a.name for a in schema_args if a.is_out]
        # new_*/*_like take their options from a tensor; only free factories default to cpu
        self.options_filled = not with_out and "pin_memory" in by_name and any(
            p.role == "tensor_option" for p in sig.params)
        self.factory = self.options_filled and not sig.method and not any(
            p.kind == "Tensor" and p.role == "input" for p in sig.params)


_INT_LISTS = ("IntArrayRef", "SymIntArrayRef")
_TYPE_NAMES = {"Tensor": "Tensor", "Scalar": "Number", "int64_t": "int", "SymInt": "int",
               "double": "float", "complex": "complex", "TensorList": "tuple of Tensors",
               "IntArrayRef": "tuple of ints", "SymIntArrayRef": "tuple of ints",
               "ArrayRef<double>": "tuple of floats", "Generator": "torch.Generator",
               "bool": "bool", "ScalarType": "torch.dtype", "Layout": "torch.layout",
               "MemoryFormat": "torch.memory_format", "Device": "torch.device",
               "std::string": "str", "c10::string_view": "str", "Storage": "torch.Storage",
               "PyObject*": "object", "QScheme": "torch.qscheme", "Dimname": "name",
               "DimnameList": "tuple of names", "ScalarList": "tuple of Scalars",
               "at::ArrayRef<at::Scalar>": "tuple of Scalars",
               "c10::List<::std::optional<Tensor>>": "tuple of Tensors"}


# --- entry points for the generated spellings ------------------------------------------------------

class Spelling:
    """A spelling's signatures, compiled on first use (deprecated ones last), and its binding
    recipes (call_cache: argument-type pattern -> Recipe, or False when not cacheable)."""

    __slots__ = ("raw", "name", "_sigs", "recipes")

    def __init__(self, sigs, name: str):
        self.raw, self.name, self._sigs = sigs, name, None
        self.recipes: dict = {}

    @property
    def sigs(self) -> list[Signature]:
        if self._sigs is None:
            raw, name = self.raw, self.name
            self._sigs = [Signature(s, name) for s in raw if not s.deprecated] + \
                [Signature(s, name) for s in raw if s.deprecated]
        return self._sigs


def _parse_any(compiled: list[Signature], args, kwargs):
    errors = []
    for sig in compiled:
        try:
            return sig, sig.parse(args, kwargs)
        except _NoMatch as e:
            errors.append((sig, str(e)))
        except _NotTensor as e:  # "argument n": the parameter's place in the signature
            raise TypeError(f"expected Tensor as element {e.index} in argument "
                            f"{sig.params.index(e.param)}, but got {tp_name(e.obj)}") from None
    if len(compiled) == 1:
        raise TypeError(errors[0][1])
    # PythonArgParser::print_error: the one visible signature whose argument count fits names
    # its own mismatch; else format_invalid_args over the visible signatures
    n = len(args) + len(kwargs)
    plausible = [e for s, e in errors if not s.deprecated and s.min_args <= n <= len(s.params)]
    if len(plausible) == 1:
        raise TypeError(plausible[0])
    visible = [s for s, _ in errors if not s.deprecated]
    raise TypeError(format_invalid_args(compiled[0].name, args, kwargs,
                                        [s.printed for s in visible]))


def parse_signatures(sigs: list[Signature], args: tuple, kwargs: dict) -> tuple[int, list]:
    """PythonArgParser::parse over a hand-written binding's signatures: the index of the first
    that takes the call and its converted values, else upstream's error for the call."""
    sig, values = _parse_any(sigs, args, kwargs)
    return sigs.index(sig), values


def _recipe_for(sp: Spelling, key, sig, self_tensor, args, kwargs) -> None:
    sp.recipes[key] = _call_cache.record(sp.sigs, sig, self_tensor, args, kwargs) or False


def _check_out_type_matches(out, options) -> None:
    """python_arg_parser's check_out_type_matches: a factory's out= overload takes no dtype or
    layout, so those given beside out= must be out's own."""
    dt, layout = options.get("dtype"), options.get("layout")
    if dt is not None and isinstance(out, _TensorBase) and out.dtype is not dt:
        raise RuntimeError(f"dtype {dt._cpp_name} does not match dtype of out parameter "
                           f"({out.dtype._cpp_name})")
    if layout is not None and isinstance(out, _TensorBase) and out.layout is not layout:
        raise RuntimeError(f"layout {layout} does not match layout of out parameter "
                           f"({out.layout})")


def call_function(fn, sp: Spelling, args: tuple, kwargs: dict, key=None):
    """``key``: the call's key_of, where the spelling already made it."""
    if key is None:
        key = tuple(map(type, args))
        if kwargs or not NOT_SEQUENCES.issuperset(key):
            key = _call_cache.key_of(None, args, kwargs)
    recipe = sp.recipes.get(key)
    if recipe and not (_TF_TLS.stack and _TF_TLS.state != 2):
        if recipe.run is not None:
            return recipe.run(None, args, kwargs)
        op = recipe.op
        pargs, pkwargs, options = recipe.place(None, args, kwargs)
    else:
        sig, values = _parse_any(sp.sigs, args, kwargs)
        if _wants_torch_function(args) or (kwargs and _wants_torch_function(kwargs.values())):
            from torch.overrides import handle_torch_function

            return handle_torch_function(fn, overridable_arguments(args, kwargs), *args, **kwargs)
        op, pargs, pkwargs, options = sig.target(values)
        if recipe is None:
            _recipe_for(sp, key, sig, None, args, kwargs)
    if options and "out" in pkwargs:
        _check_out_type_matches(pkwargs["out"], options)
    result = door.aten_dispatch(op, pargs, pkwargs)
    if options and options.get("requires_grad"):
        _set_requires_grad(result)
    if type(result) is tuple:
        result = _named(op, result)
    elif type(result) is list:
        result = tuple(result)  # Tensor[] returns are tuples in upstream's Python bindings
    return result


def not_a_tensor(name: str, obj) -> TypeError:
    """What upstream's TensorBase methods (C method descriptors) raise when called on another object."""
    return TypeError(f"descriptor '{name}' for 'torch._C.TensorBase' objects doesn't apply to a "
                     f"'{type(obj).__name__}' object")


def call_method(method, sp: Spelling, self, args: tuple, kwargs: dict, key=None):
    """``key``: the call's key_of, where the spelling already made it."""
    if key is None:
        key = (type(self), *map(type, args))  # the common pattern, inline: types only
        if kwargs or not NOT_SEQUENCES.issuperset(key):
            key = _call_cache.key_of(self, args, kwargs)
    recipe = sp.recipes.get(key)
    if recipe and not (_TF_TLS.stack and _TF_TLS.state != 2):
        if recipe.run is not None:
            return recipe.run(self, args, kwargs)
        op = recipe.op
        pargs, pkwargs, options = recipe.place(self, args, kwargs)
    else:
        if not isinstance(self, _TensorBase):
            raise not_a_tensor(method.__name__, self)
        sig, values = _parse_any(sp.sigs, args, kwargs)
        if _wants_torch_function((self,) + args) or \
                (kwargs and _wants_torch_function(kwargs.values())):
            from torch.overrides import handle_torch_function

            import torch

            api = getattr(torch.Tensor, method.__name__, method)
            return handle_torch_function(api, overridable_arguments((self,) + args, kwargs), self, *args,
                                         **kwargs)
        op, pargs, pkwargs, options = sig.target(values, self)
        if recipe is None:
            _recipe_for(sp, key, sig, self, args, kwargs)
    result = door.aten_dispatch(op, pargs, pkwargs)
    if options and options.get("requires_grad"):  # (x.new_ones(..., requires_grad=True))
        _set_requires_grad(result)
    if type(result) is list:
        return tuple(result)
    return _named(op, result) if type(result) is tuple else result




def torch_function_or(fn, name: str, method: bool):
    """Wrap a hand-written spelling so tensor-likes and modes get __torch_function__ first."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if (_wants_torch_function(args) or (kwargs and _wants_torch_function(kwargs.values()))) \
                and not called_by_torch_c(1):
            import torch
            from torch.overrides import handle_torch_function

            api = getattr(torch.Tensor, name) if method else wrapper
            return handle_torch_function(api, overridable_arguments(args, kwargs), *args, **kwargs)
        return fn(*args, **kwargs)

    wrapper.__name__ = wrapper.__qualname__ = name
    return wrapper
