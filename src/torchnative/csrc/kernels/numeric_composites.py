"""CompositeImplicitAutograd numerics upstream writes in C++ (ReduceOps.cpp, Correlation.cpp,
Integration.cpp, Sorting.cpp, Linear.cpp): diff, cross, cov, corrcoef, trapezoid,
cumulative_trapezoid, quantile and nanquantile. Each calls other operators through the door in
upstream's order, with upstream's checks and messages.
"""

from __future__ import annotations

from ..core import dtypes as D
from ..core.tensor import TensorBase, wrap_dim
from ..dispatch.call import call
from ..ops.kernel_registry import COMPOSITE, kernel
from .composite_out import register_out_forms
from ..platform.torch_warn import torch_warn

_BOOL = D.BY_NAME["bool"]
_LONG = D.BY_NAME["int64"]


def _narrow(t, dim, start, length):
    return call("narrow", t, dim, start, length)


# --- diff -------------------------------------------------------------------------------------

def _diff_check_shape(self, other, dim):
    wrapped = wrap_dim(dim, self.dim())
    if self.dim() != other.dim():
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for i in range(other.dim()):
        if i != wrapped and other.shape[i] != self.shape[i]:
            raise RuntimeError(
                "diff expects the shape of tensor to prepend or append to match that of input "
                f"except along the differencing dimension; input.size({i}) = {self.shape[i]}, "
                f"but got tensor.size({i}) = {other.shape[i]}")


def _diff_helper(self, n, dim):
    if n == 0:
        return call("copy_", call("zeros_like", self), self)
    out_len = self.shape[dim] - 1
    result = self
    n = min(n, self.shape[dim])
    for _ in range(n):
        hi, lo = _narrow(result, dim, 1, out_len), _narrow(result, dim, 0, out_len)
        if self.dtype is _BOOL:
            result = call("logical_xor", hi, lo)
        else:
            result = call("sub.Tensor", hi, lo)
        out_len -= 1
    return result


@kernel("diff", composite=True)
def diff(self, n=1, dim=-1, prepend=None, append=None):
    if self.dim() < 1:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    for other in (prepend, append):
        if other is not None:
            _diff_check_shape(self, other, dim)
    dim = wrap_dim(dim, self.dim())
    if (prepend is None and append is None) or n == 0:
        return _diff_helper(self, n, dim)
    parts = [t for t in (prepend, self, append) if t is not None]
    return _diff_helper(call("cat", parts, dim), n, dim)


# --- cross ------------------------------------------------------------------------------------

@kernel("cross", composite=True)
def cross(self, other, dim=None):
    if dim is None:
        torch_warn(
            "Using torch.cross without specifying the dim arg is deprecated.\nPlease either pass "
            "the dim explicitly or simply use torch.linalg.cross.\nThe default value of dim will "
            "change to agree with that of linalg.cross in a future release.")
        for i, s in enumerate(self.shape):
            if s == 3:
                dim = i
                break
        else:
            raise RuntimeError("no dimension of size 3 in input")
    return call("linalg_cross", self, other, dim=dim)


# --- covariance and correlation ---------------------------------------------------------------

@kernel("cov", composite=True)
def cov(self, *, correction=1, fweights=None, aweights=None):
    if self.dim() > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {self.dim()} dimensions")
    if self.dtype is _BOOL:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = call("view", self, [1, -1]) if self.dim() < 2 else self
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
        if w.dim() > 1:
            raise RuntimeError(f"cov(): expected fweights to have one or fewer dimensions but got "
                               f"fweights with {w.dim()} dimensions")
        if w.dtype.is_floating_point or w.dtype.is_complex or w.dtype is _BOOL:
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights "
                               f"with {w.dtype._cpp_name} dtype")
        if w.numel() != n_obs:
            raise RuntimeError(f"cov(): expected fweights to have the same numel as there are "
                               f"observations in the input but got {w.numel()} != {n_obs}")
        if n_obs and not bool(call("ge.Scalar", call("min", w), 0).item()):
            raise RuntimeError("cov(): fweights cannot be negative")
    if aweights is not None:
        aw = aweights
        if aw.dim() > 1:
            raise RuntimeError(f"cov(): expected aweights to have one or fewer dimensions but got "
                               f"aweights with {aw.dim()} dimensions")
        if not aw.dtype.is_floating_point:
            raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got "
                               f"aweights with {aw.dtype._cpp_name} dtype")
        if aw.numel() != n_obs:
            raise RuntimeError(f"cov(): expected aweights to have the same numel as there are "
                               f"observations in the input but got {aw.numel()} != {n_obs}")
        if n_obs and not bool(call("ge.Scalar", call("min", aw), 0).item()):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aw if w is None else call("mul.Tensor", w, aw)
    if w is not None:
        w_sum = call("sum", w)
        if not bool(call("ne.Scalar", w_sum, 0).item()):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    else:
        w_sum = call("scalar_tensor", n_obs, dtype=_LONG)
    weighted = call("mul.Tensor", x, w) if w is not None else x
    avg = call("div.Tensor", call("sum.dim_IntList", weighted, [1]), w_sum)
    if w is not None and correction != 0:
        if aweights is not None:
            norm = call("sub.Tensor", w_sum, call("div.Tensor", call(
                "mul.Scalar", call("sum", call("mul.Tensor", w, aweights)), correction), w_sum))
        else:
            norm = call("sub.Scalar", w_sum, correction)
    else:
        norm = call("sub.Scalar", w_sum, correction)
    if bool(call("le.Scalar", norm, 0).item()):
        torch_warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                   "than the number of observations.")
        norm = call("zeros_like", norm)
    x = call("sub.Tensor", x, call("unsqueeze", avg, 1))
    rhs = call("mul.Tensor", x, w) if w is not None else x
    c = call("mm", x, call("conj", call("t", rhs)))
    return call("squeeze", call("true_divide.Tensor", c, norm))


@kernel("corrcoef", composite=True)
def corrcoef(self):
    if self.dim() > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {self.dim()} dimensions")
    c = call("cov", self)
    if c.dim() == 0:
        return call("div.Tensor", c, c)
    d = call("diagonal", c)
    stddev = call("sqrt", call("real", d) if d.dtype.is_complex else d)
    c = call("div.Tensor", c, call("view", stddev, [-1, 1]))
    c = call("div.Tensor", c, call("view", stddev, [1, -1]))
    if c.dtype.is_complex:
        return call("complex", call("clip", call("real", c), -1, 1),
                    call("clip", call("imag", c), -1, 1))
    return call("clip", c, -1, 1)


# --- integration ------------------------------------------------------------------------------

def _zeros_except(y, dim):
    sizes = list(y.shape)
    del sizes[wrap_dim(dim, y.dim())]
    return call("zeros", sizes, dtype=y.dtype)


def _dx_view(y, x, dim, name):
    if x.dim() == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        sizes = [1] * y.dim()
        sizes[dim] = x.shape[0]
        xv = call("view", x, sizes)
    elif x.dim() < y.dim():
        xv = call("view", x, [1] * (y.dim() - x.dim()) + list(x.shape))
    else:
        xv = x
    return call("sub.Tensor", call("slice.Tensor", xv, dim, 1),
                call("slice.Tensor", xv, dim, 0, -1))


def _check_dx(dx, name):
    if isinstance(dx, (bool, complex)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")


@kernel("trapezoid.x", composite=True)
def trapezoid_x(y, x, *, dim=-1):
    dim = wrap_dim(dim, y.dim())
    if y.shape[dim] == 0:
        return _zeros_except(y, dim)
    if y.dtype is _BOOL or x.dtype is _BOOL:
        raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not "
                           "supported")
    dx = _dx_view(y, x, dim, "trapezoid")
    s = call("add.Tensor", call("slice.Tensor", y, dim, 1), call("slice.Tensor", y, dim, 0, -1))
    return call("div.Scalar", call("sum.dim_IntList", call("mul.Tensor", dx, s), [dim]), 2.0)


@kernel("trapezoid.dx", composite=True)
def trapezoid_dx(y, *, dx=1, dim=-1):
    if y.shape[wrap_dim(dim, y.dim())] == 0:
        return _zeros_except(y, dim)
    if y.dtype is _BOOL:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    _check_dx(dx, "trapezoid")
    ends = call("add.Tensor", call("select.int", y, dim, 0), call("select.int", y, dim, -1))
    total = call("sub.Tensor", call("sum.dim_IntList", y, [dim]), call("mul.Scalar", ends, 0.5))
    return call("mul.Scalar", total, float(dx))


@kernel("cumulative_trapezoid.x", composite=True)
def cumulative_trapezoid_x(y, x, *, dim=-1):
    dim = wrap_dim(dim, y.dim())
    if y.dtype is _BOOL or x.dtype is _BOOL:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `x` or `y`, but "
                           "bool is not supported")
    dx = _dx_view(y, x, dim, "cumulative_trapezoid")
    s = call("add.Tensor", call("slice.Tensor", y, dim, 0, -1), call("slice.Tensor", y, dim, 1))
    return call("cumsum", call("mul.Tensor", call("div.Scalar", dx, 2.0), s), dim)


@kernel("cumulative_trapezoid.dx", composite=True)
def cumulative_trapezoid_dx(y, *, dx=1, dim=-1):
    if y.dtype is _BOOL:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not "
                           "supported")
    _check_dx(dx, "cumulative_trapezoid")
    s = call("add.Tensor", call("slice.Tensor", y, dim, 0, -1), call("slice.Tensor", y, dim, 1))
    return call("cumsum", call("mul.Scalar", s, float(dx) / 2.0), dim)


# --- quantiles --------------------------------------------------------------------------------

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_checks(self, q):
    if self.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q.dim() > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if self.dtype not in (D.BY_NAME["float32"], D.BY_NAME["float64"]):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if self.dtype != q.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")


def _output_shape(dim, self, q, keepdim, wrapped):
    if dim is not None and self.dim() > 0:
        shape = list(self.shape)
        if keepdim:
            shape[wrapped] = 1
        else:
            del shape[wrapped]
    elif keepdim:
        shape = [1] * self.dim()
    else:
        shape = []
    if q.dim() > 0:
        shape.insert(0, q.numel())
    return shape


def _quantile(self, q, dim, keepdim, interpolation, ignore_nan):
    _quantile_checks(self, q)
    wrapped = wrap_dim(0 if dim is None else dim, self.dim())
    out_shape = _output_shape(dim, self, q, keepdim, wrapped)
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    in_range = call("all", call("logical_and", call("ge.Scalar", q, 0), call("le.Scalar", q, 1)))
    if not bool(in_range.item()):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if dim is None:
        ordered = call("sort", call("flatten.using_ints", self))[0]
    elif wrapped == self.dim() - 1:
        ordered = call("sort", self)[0]
    else:
        ordered = call("sort", call("transpose.int", call("unsqueeze", self, -1), wrapped,
                                    -1))[0]
    if q.dim() == 0:
        out_shape.insert(0, q.numel())
    in_shape = out_shape[1:] + [0]
    in_shape[-1] = ordered.shape[-1]
    ordered = call("view", ordered, in_shape)
    if ordered.shape[-1] > 2 ** 24:
        raise RuntimeError("quantile() input tensor is too large")
    if ignore_nan:
        valid = call("sum.dim_IntList", call("logical_not", call("isnan", ordered)), [-1], True)
        ranks = call("mul.Tensor", q, call("sub.Scalar", valid, 1))
        ranks = call("masked_fill.Scalar", ranks, call("lt.Scalar", ranks, 0), 0)
    else:
        last = ordered.shape[-1] - 1
        scaled, has_nan = call("broadcast_tensors", [
            call("mul.Scalar", q, last), call("any.dim", call("isnan", ordered), -1, True)])
        ranks = call("masked_fill.Scalar", scaled, has_nan, last)
    if interpolation == "lower":
        ranks = call("floor", ranks)
    elif interpolation == "higher":
        ranks = call("ceil", ranks)
    elif interpolation == "nearest":
        ranks = call("round", ranks)
    below = call("_to_copy", ranks, dtype=_LONG)
    values = call("gather", ordered, -1, below)
    if interpolation in ("linear", "midpoint"):
        if interpolation == "midpoint":
            weights = call("masked_fill.Scalar", call("full_like", ranks, 0.5),
                           call("eq.Tensor", ranks, below), 0)
        else:
            weights = call("sub.Tensor", ranks, below)
        above = call("_to_copy", call("ceil", ranks), dtype=_LONG)
        values = call("lerp.Tensor", values, call("gather", ordered, -1, above), weights)
    if q.dim() == 0:
        return call("squeeze.dim", values, -1)
    return call("squeeze.dim", call("transpose.int", call("unsqueeze", values, 0), 0, -1), -1)


@kernel("quantile", composite=True)
def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(self, q, dim, keepdim, interpolation, False)


@kernel("nanquantile", composite=True)
def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(self, q, dim, keepdim, interpolation, True)


def _scalar_q(self, q, name):
    if not 0 <= q <= 1:
        raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
    return call("scalar_tensor", q, dtype=self.dtype)


@kernel("quantile.scalar", composite=True)
def quantile_scalar(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    return quantile(self, _scalar_q(self, q, "quantile"), dim, keepdim,
                    interpolation=interpolation)


@kernel("nanquantile.scalar", composite=True)
def nanquantile_scalar(self, q, dim=None, keepdim=False, *, interpolation="linear"):
    return nanquantile(self, _scalar_q(self, q, "quantile"), dim, keepdim,
                       interpolation=interpolation)


# --- gradient ---------------------------------------------------------------------------------

def _pre_check_gradient(self, spacing_size, dims, edge_order):
    if self.dtype is D.BY_NAME["uint8"]:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if spacing_size is not None and dims is None and spacing_size != self.dim():
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {self.dim()}', since dim argument was not given, but got a "
            f"list of length {spacing_size}")
    if spacing_size is not None and dims is not None and spacing_size != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
            f"arguments to have the same length, but got a spacing argument of length "
            f"{spacing_size} and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dims is not None:
        seen = set()
        for d in dims:
            w = wrap_dim(d, self.dim())
            if w in seen:
                raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
            seen.add(w)
        sizes = [self.shape[d] for d in dims]
    else:
        sizes = list(self.shape)
    if any(s < edge_order + 1 for s in sizes):
        raise RuntimeError("torch.gradient expected each dimension size to be at least "
                           "edge_order+1")


def _sl(t, d, start, end=None):
    return call("slice.Tensor", t, d, start, end)


def _gradient_float(self, spacing, dims, edge_order):
    result = []
    for i, d in enumerate(dims):
        d = wrap_dim(d, self.dim())
        dx = spacing[i]
        center = call("div.Scalar", call("sub.Tensor", _sl(self, d, 2), _sl(self, d, 0, -2)), dx)
        if edge_order == 1:
            prepend = call("div.Scalar", call("sub.Tensor", _sl(self, d, 1, 2), _sl(self, d, 0, 1)),
                           dx)
            append = call("div.Scalar", call("sub.Tensor", _sl(self, d, -1), _sl(self, d, -2, -1)),
                          dx)
        else:
            prepend = call("div.Scalar", call("sub.Tensor", call(
                "add.Tensor", call("mul.Scalar", _sl(self, d, 0, 1), -1.5),
                call("mul.Scalar", _sl(self, d, 1, 2), 2)), call(
                "mul.Scalar", _sl(self, d, 2, 3), 0.5)), dx)
            append = call("div.Scalar", call("add.Tensor", call(
                "add.Tensor", call("mul.Scalar", _sl(self, d, -3, -2), 0.5),
                call("mul.Scalar", _sl(self, d, -2, -1), -2)), call(
                "mul.Scalar", _sl(self, d, -1), 1.5)), dx)
        result.append(call("cat", [prepend, call("div.Scalar", center, 2), append], d))
    return result


def _gradient_coords(self, coordinates, dims, edge_order):
    result = []
    for i, d in enumerate(dims):
        coord = coordinates[i]
        if coord.dim() != 1:
            raise RuntimeError("torch.gradient expected each element of spacing to have one "
                               f"dimension, but got an element with {coord.dim()} dimensions!")
        d = wrap_dim(d, self.dim())
        shape = [1] * self.dim()
        shape[d] = -1
        ax = call("diff", coord, 1, 0)
        dx1, dx2 = call("slice.Tensor", ax, 0, 0, -1), call("slice.Tensor", ax, 0, 1)

        def div(x, y):
            return call("div.Tensor", x, y)

        def mul(x, y):
            return call("mul.Tensor", x, y)

        def add(x, y):
            return call("add.Tensor", x, y)

        def sub(x, y):
            return call("sub.Tensor", x, y)

        a = call("reshape", div(call("neg", dx2), mul(dx1, add(dx1, dx2))), shape)
        b = call("reshape", div(sub(dx2, dx1), mul(dx1, dx2)), shape)
        c = call("reshape", div(dx1, mul(dx2, add(dx1, dx2))), shape)
        center = add(add(mul(a, _sl(self, d, 0, -2)), mul(b, _sl(self, d, 1, -1))),
                     mul(c, _sl(self, d, 2)))
        first, second = call("select.int", ax, 0, 0), call("select.int", ax, 0, 1)
        last, before = call("select.int", ax, 0, -1), call("select.int", ax, 0, -2)
        if edge_order == 1:
            prepend = div(sub(_sl(self, d, 1, 2), _sl(self, d, 0, 1)), first)
            append = div(sub(_sl(self, d, -1), _sl(self, d, -2, -1)), last)
        else:
            a = div(call("neg", add(call("mul.Scalar", first, 2.0), second)),
                    mul(first, add(first, second)))
            b = div(add(first, second), mul(first, second))
            c = div(call("neg", first), mul(second, add(first, second)))
            prepend = add(add(mul(a, _sl(self, d, 0, 1)), mul(b, _sl(self, d, 1, 2))),
                          mul(c, _sl(self, d, 2, 3)))
            a = div(last, mul(before, add(last, before)))
            b = div(call("neg", add(last, before)), mul(last, before))
            c = div(add(call("mul.Scalar", last, 2), before), mul(last, add(last, before)))
            append = add(add(mul(a, _sl(self, d, -3, -2)), mul(b, _sl(self, d, -2, -1))),
                         mul(c, _sl(self, d, -1)))
        result.append(call("cat", [prepend, center, append], d))
    return result


def _all_dims(self, dim):
    return [dim] if dim is not None else list(range(self.dim()))


@kernel("gradient.scalarint", composite=True)
def gradient_scalarint(self, *, spacing=None, dim=None, edge_order=1):
    dims = _all_dims(self, dim)
    unit = spacing if spacing is not None else 1.0
    steps = [unit] * (1 if dim is not None else self.dim())
    _pre_check_gradient(self, len(steps) if spacing is not None else None,
                        dims if dim is not None else None, edge_order)
    return _gradient_float(self, steps, dims, edge_order)


@kernel("gradient.scalararray", composite=True)
def gradient_scalararray(self, *, spacing, dim, edge_order=1):
    steps = [spacing] * len(dim)
    _pre_check_gradient(self, len(steps), list(dim), edge_order)
    return _gradient_float(self, steps, list(dim), edge_order)


@kernel("gradient.array", composite=True)
def gradient_array(self, *, dim, edge_order=1):
    steps = [1.0] * len(dim)
    _pre_check_gradient(self, len(steps), list(dim), edge_order)
    return _gradient_float(self, steps, list(dim), edge_order)


@kernel("gradient.scalarrayint", composite=True)
def gradient_scalarrayint(self, *, spacing, dim=None, edge_order=1):
    dims = _all_dims(self, dim)
    _pre_check_gradient(self, len(spacing), dims if dim is not None else None, edge_order)
    return _gradient_float(self, list(spacing), dims, edge_order)


@kernel("gradient.scalarrayarray", composite=True)
def gradient_scalarrayarray(self, *, spacing, dim, edge_order=1):
    _pre_check_gradient(self, len(spacing), list(dim), edge_order)
    return _gradient_float(self, list(spacing), list(dim), edge_order)


@kernel("gradient.tensorarrayint", composite=True)
def gradient_tensorarrayint(self, *, spacing, dim=None, edge_order=1):
    dims = _all_dims(self, dim)
    _pre_check_gradient(self, len(spacing), dims if dim is not None else None, edge_order)
    return _gradient_coords(self, list(spacing), dims, edge_order)


@kernel("gradient.tensorarray", composite=True)
def gradient_tensorarray(self, *, spacing, dim, edge_order=1):
    _pre_check_gradient(self, len(spacing), list(dim), edge_order)
    return _gradient_coords(self, list(spacing), list(dim), edge_order)


register_out_forms(*(name for name, fn in list(COMPOSITE.items())
                     if getattr(fn, "__module__", None) == __name__))
