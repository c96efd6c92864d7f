"""CompositeImplicitAutograd pointwise operators upstream has no Python decomposition for.

Most are aliases (``special_expit`` is ``sigmoid``, ``__and__`` is ``bitwise_and``, ``max.other``
is ``maximum``...): each overload, and its in-place and ``out=`` forms, calls the target's
overload of the same shape through the door, as upstream's C++ does. (The generic aliases --
``multiply``, ``clip``... -- and ``square``/``positive`` live in composites.py; a name registered
there is left alone here.) The others are written as upstream writes them, in terms of other
operators: isfinite, isreal, square_/square.out, float_power, isclose.
"""

from __future__ import annotations

from ..core import dtypes as D
from ..ops.native_functions import by_qualname
from ..ops.kernel_registry import COMPOSITE, kernel


def _call(name, *args, **kwargs):
    from ..dispatch.call import call

    return call(name, *args, **kwargs)


# alias -> target; overloads map by name unless listed in _OVERLOADS
_ALIASES = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
    "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh", "clip": "clamp", "fix": "trunc",
    "negative": "neg", "multiply": "mul", "divide": "div", "subtract": "sub", "true_divide": "div",
    "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
    "__and__": "bitwise_and", "__or__": "bitwise_or", "__xor__": "bitwise_xor",
    "special_expit": "sigmoid", "special_erf": "erf", "special_erfc": "erfc",
    "special_erfinv": "erfinv", "special_exp2": "exp2", "special_expm1": "expm1",
    "special_log1p": "log1p", "special_sinc": "sinc", "special_logit": "logit",
    "special_xlogy": "xlogy", "special_round": "round", "special_psi": "digamma",
    "special_digamma": "digamma", "special_gammaln": "lgamma", "special_i0": "i0",
    "special_polygamma": "polygamma", "special_multigammaln": "mvlgamma",
}
_OVERLOADS = {
    ("special_xlogy", ""): "Tensor", ("special_xlogy", "self_scalar"): "Scalar_Self",
    ("special_xlogy", "other_scalar"): "Scalar_Other",
    ("special_xlogy", "out"): "OutTensor", ("special_xlogy", "self_scalar_out"): "OutScalar_Self",
    ("special_xlogy", "other_scalar_out"): "OutScalar_Other",
    ("special_round", ""): "decimals", ("special_round", "out"): "decimals_out",
    ("max", "other"): "maximum.", ("max", "out"): "maximum.out",
    ("min", "other"): "minimum.", ("min", "out"): "minimum.out",
}


def composite(name: str):
    """Register a composite kernel unless another module already provides one for ``name``."""
    def register(fn):
        if name not in COMPOSITE:
            kernel(name, composite=True)(fn)
        return fn

    return register


def _forward(target: str):
    def composite(*args, **kwargs):
        return _call(target, *args, **kwargs)

    composite.__name__ = target
    return composite


def _register_aliases() -> None:
    table = by_qualname()
    pairs = [(a, t) for a, t in _ALIASES.items()] + [("max", None), ("min", None)]
    for alias, target in pairs:
        for name in (alias, alias + "_"):
            for ov, nf in table.get(f"aten::{name}", {}).items():
                if "CompositeImplicitAutograd" not in nf.dispatch:
                    continue
                mapped = _OVERLOADS.get((alias, ov))
                if target is None:  # max/min: only their binary overloads are aliases
                    if mapped is None:
                        continue
                    dest = mapped.rstrip(".")
                else:
                    tname = target + ("_" if name.endswith("_") and not alias.endswith("_") else "")
                    tov = mapped if mapped is not None else ov
                    if tov not in table.get(f"aten::{tname}", {}):
                        continue
                    dest = f"{tname}.{tov}" if tov else tname
                composite(f"{name}.{ov}" if ov else name)(_forward(dest))


_register_aliases()


# ---- written out ---------------------------------------------------------------------------------
@composite("isfinite")
def isfinite(self):
    dt = self._dtype
    if not (dt.is_floating_point or dt.is_complex):
        return _call("ones_like", self, dtype=D.BY_NAME["bool"],
                     memory_format=_preserve())
    if dt.is_complex:
        return _call("__iand__.Tensor", isfinite(_call("real", self)),
                     isfinite(_call("imag", self)))
    if dt in D.FLOAT8 and dt._name != "float8_e5m2":  # measured: e5m2 alone has a kernel
        raise NotImplementedError(f"\"isfinite\" not implemented for '{dt._cpp_name}'")
    return _call("mul.Tensor", _call("eq.Tensor", self, self),
                 _call("ne.Scalar", _call("abs", self), float("inf")))


def _preserve():
    from ..core.layouts import preserve_format

    return preserve_format


@composite("isreal")
def isreal(self):
    if not self._dtype.is_complex:
        return _call("ones_like", self, dtype=D.BY_NAME["bool"], memory_format=_preserve())
    return _call("eq.Scalar", _call("imag", self), 0)


@composite("square")
def square(self):
    return _call("pow.Tensor_Scalar", self, 2)


@composite("square_")
def square_(self):
    return _call("pow_.Scalar", self, 2)


@composite("square.out")
def square_out(self, *, out):
    return _call("pow.Tensor_Scalar_out", self, 2, out=out)


@composite("positive")
def positive(self):
    if self._dtype is D.BY_NAME["bool"]:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return self


# float_power: pow in float64 (complex128 when anything is complex)
def _fp_dtype(*xs):
    from ..core.tensor import TensorBase

    cplx = any((x._dtype.is_complex if isinstance(x, TensorBase) else isinstance(x, complex))
               for x in xs)
    return D.BY_NAME["complex128" if cplx else "float64"]


def _fp_scalar(v, dt):
    return complex(v) if dt.is_complex else float(v.real if isinstance(v, complex) else v)


def _to(t, dt):
    return t if t._dtype is dt else _call("_to_copy", t, dtype=dt)


@composite("float_power.Tensor_Tensor")
def float_power_tt(self, exponent):
    dt = _fp_dtype(self, exponent)
    return _call("pow.Tensor_Tensor", _to(self, dt), _to(exponent, dt))


@composite("float_power.Tensor_Scalar")
def float_power_ts(self, exponent):
    dt = _fp_dtype(self, exponent)
    return _call("pow.Tensor_Scalar", _to(self, dt), _fp_scalar(exponent, dt))


@composite("float_power.Scalar")
def float_power_s(self, exponent):
    dt = _fp_dtype(self, exponent)
    return _call("pow.Scalar", _fp_scalar(self, dt), _to(exponent, dt))


@composite("float_power.Tensor_Tensor_out")
def float_power_tt_out(self, exponent, *, out):
    dt = _fp_dtype(self, exponent)
    return _call("pow.Tensor_Tensor_out", _to(self, dt), _to(exponent, dt), out=out)


@composite("float_power.Tensor_Scalar_out")
def float_power_ts_out(self, exponent, *, out):
    dt = _fp_dtype(self, exponent)
    return _call("pow.Tensor_Scalar_out", _to(self, dt), _fp_scalar(exponent, dt), out=out)


@composite("float_power.Scalar_out")
def float_power_s_out(self, exponent, *, out):
    dt = _fp_dtype(self, exponent)
    return _call("pow.Scalar_out", _fp_scalar(self, dt), _to(exponent, dt), out=out)


def _float_power_inplace_check(self, dt):
    if self._dtype is not dt:
        raise RuntimeError(f"the base given to float_power_ has dtype {self._dtype._cpp_name} but "
                           f"the operation's result requires dtype {dt._cpp_name}")


@composite("float_power_.Tensor")
def float_power_inplace_t(self, exponent):
    dt = _fp_dtype(self, exponent)
    _float_power_inplace_check(self, dt)
    return _call("pow_.Tensor", self, _to(exponent, dt))


@composite("float_power_.Scalar")
def float_power_inplace_s(self, exponent):
    dt = _fp_dtype(self, exponent)
    _float_power_inplace_check(self, dt)
    return _call("pow_.Scalar", self, _fp_scalar(exponent, dt))


@composite("isclose")
def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if self._dtype is not other._dtype:
        raise RuntimeError(f"{self._dtype._cpp_name} did not match {other._dtype._cpp_name}")
    if self._dtype.is_complex and equal_nan:
        raise RuntimeError("isclose with equal_nan=True is not supported for complex inputs.")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    close = _call("eq.Tensor", self, other)
    if equal_nan and (self._dtype.is_floating_point or self._dtype.is_complex):
        close = _call("__ior__.Tensor", close,
                      _call("__iand__.Tensor", _call("isnan", self), _call("isnan", other)))
    if rtol == 0 and atol == 0:
        return close
    boolean = D.BY_NAME["bool"]
    cs = _to(self, D.get_default_dtype()) if self._dtype is boolean else self
    co = _to(other, D.get_default_dtype()) if other._dtype is boolean else other
    allowed = _call("add.Scalar", _call("abs", _call("mul.Scalar", co, rtol)), atol)
    actual = _call("abs", _call("sub.Tensor", cs, co))
    finite = _call("__iand__.Tensor", _call("isfinite", actual),
                   _call("le.Tensor", actual, allowed))
    return _call("__ior__.Tensor", close, finite)


# where with Python scalars: the scalars become tensors of the result type (TensorCompare.cpp)
def _scalar_tensor(value, dt, like):
    return _call("scalar_tensor", value, dtype=dt, layout=None, device=like.device,
                 pin_memory=None)


def _result_type(*xs):
    from .support.common import result_type

    return result_type(*xs)


@composite("where.ScalarOther")
def where_scalar_other(condition, self, other):
    dt = _result_type(self, other)
    return _call("where.self", condition, _to(self, dt), _scalar_tensor(other, dt, self))


@composite("where.ScalarSelf")
def where_scalar_self(condition, self, other):
    dt = _result_type(other, self)
    return _call("where.self", condition, _scalar_tensor(self, dt, other), _to(other, dt))


@composite("where.Scalar")
def where_scalars(condition, self, other):
    dt = _result_type(self, other)
    return _call("where.self", condition, _scalar_tensor(self, dt, condition),
                 _scalar_tensor(other, dt, condition))


@kernel("allclose")
def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(_call("all", _call("isclose", self, other, rtol, atol, equal_nan)).item())


@composite("log_sigmoid")
def log_sigmoid(self):
    return _call("log_sigmoid_forward", self)[0]
