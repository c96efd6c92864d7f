"""FunctionsManual.cpp helpers for pointwise operators and activations."""

from __future__ import annotations

import math

from ...core.tensor import TensorBase
from ...dispatch.call import call
from ..cpp_shims import _torch, m_conj


def handle_r_to_c(self_st, grad):
    if grad is None:
        return None
    st = self_st._dtype if isinstance(self_st, TensorBase) else self_st
    if not st.is_complex and grad._dtype.is_complex:
        return _torch().real(grad)
    return grad


def maybe_multiply(t, s):
    if type(s) in (int, float, bool) and s == 1:
        return t
    return t * s


def mul_tensor_backward(grad, other, self_st):
    return handle_r_to_c(self_st, grad * m_conj(other))


def div_tensor_self_backward(grad, other, self_st, rounding_mode=None):
    if rounding_mode is not None:
        return _torch().zeros_like(grad, dtype=self_st)
    return handle_r_to_c(self_st, grad / m_conj(other))


def div_tensor_other_backward(grad, self, other, rounding_mode=None):
    if rounding_mode is not None:
        return _torch().zeros_like(grad, dtype=other._dtype)
    return handle_r_to_c(other, -grad * m_conj((self / other) / other))


def pow_backward(grad, self, exponent):
    if not isinstance(exponent, complex) and exponent == 0:
        return _torch().zeros_like(self)
    exp = complex(exponent) if isinstance(exponent, complex) else float(exponent)
    # C++'s ``exp * tensor`` with a double is Tensor::mul(Scalar): aten::mul.Scalar, which a
    # trace records (Python's ``*`` would be mul.Tensor with a wrapped number)
    return handle_r_to_c(self, grad * m_conj(call("mul.Scalar", self.pow(exp - 1), exp)))


def pow_backward_self(grad, self, exponent):
    torch = _torch()
    out = torch.where(exponent == 0.0, torch.zeros((), dtype=grad.dtype),
                      grad * m_conj(exponent * self.pow(exponent - 1)))
    return handle_r_to_c(self, out)


def pow_backward_exponent(grad, self, exponent, result):
    torch = _torch()
    if isinstance(self, TensorBase):
        if exponent._dtype.is_complex:
            is_real = torch.logical_and(torch.imag(exponent) == 0, torch.real(exponent) >= 0)
            cond = torch.logical_and(self == 0, is_real)
        else:
            cond = torch.logical_and(self == 0, exponent >= 0)
        from ...kernels.support.common import result_type

        self_ = self.to(result_type(self, exponent))
        out = grad * torch.where(cond, torch.zeros((), dtype=grad.dtype),
                                 m_conj(result * self_.log()))
        return handle_r_to_c(exponent, out)
    base = self
    if exponent._dtype.is_complex and not isinstance(base, complex):
        base = complex(base)
    import cmath

    logb = cmath.log(base) if isinstance(base, complex) else (
        math.log(base) if base > 0 else (-math.inf if base == 0 else float("nan")))
    term = m_conj(result * logb)
    if base == 0:
        if exponent._dtype.is_complex:
            cond = torch.logical_and(torch.imag(exponent) == 0, torch.real(exponent) >= 0)
        else:
            cond = exponent >= 0
        return handle_r_to_c(exponent, grad * torch.where(cond, torch.zeros((), dtype=grad.dtype),
                                                          term))
    return handle_r_to_c(exponent, grad * term)


def clamp_backward(grad, self, min, max):
    torch = _torch()
    zero = torch.scalar_tensor(0.0, dtype=grad.dtype)
    if min is not None and max is not None:
        return torch.where((self >= min).logical_and_(self <= max), grad, zero)
    if min is not None:
        return torch.where(self >= min, grad, zero)
    if max is not None:
        return torch.where(self <= max, grad, zero)
    return grad


def clamp_backward_min_max(grad, self, min, max, mask):
    torch = _torch()
    ret = [None, None]
    if grad is None:
        return tuple(ret)
    zero = torch.scalar_tensor(0.0, dtype=grad.dtype)
    if max is not None and min is not None:
        if mask[0]:
            ret[0] = torch.where((self < min).logical_and_(min < max), grad, zero)
        if mask[1]:
            ret[1] = torch.where((self > max).logical_or_(max < min), grad, zero)
    elif min is not None and mask[0]:
        ret[0] = torch.where(self < min, grad, zero)
    elif max is not None and mask[1]:
        ret[1] = torch.where(self > max, grad, zero)
    return tuple(ret)


def masked_fill_backward(grad, mask):
    return _torch().where(mask, grad, 0).sum()


def _scalar_minus(value, t):
    """C++'s ``Scalar - Tensor`` (TensorOperators.h): empty_like(t) filled, then t taken away
    in place: the operators autograd records there."""
    return _torch().empty_like(t).fill_(value).sub_(t)


def _plus_scalar(t, value):
    """C++'s ``Scalar + Tensor``: t.add(Scalar), the add.Scalar overload (AddBackward1)."""
    return _torch().ops.aten.add.Scalar(t, value)


def infinitely_differentiable_silu_backward(grad_output, input):
    s = input.sigmoid()
    return grad_output * s * _plus_scalar(input * _scalar_minus(1.0, s), 1.0)


def infinitely_differentiable_native_dropout_backward(grad, mask, scale):
    return grad * (mask.type_as(grad) * scale)


def infinitely_differentiable_mish_backward(grad_output, input):
    sigmoid = input.sigmoid()
    tanh_sp = input.exp().log1p().tanh()  # upstream's softplus here: exp, then log1p
    return grad_output * (tanh_sp + input * sigmoid * _scalar_minus(1.0, tanh_sp * tanh_sp))


def infinitely_differentiable_logit_backward(grad, self, eps):
    torch = _torch()
    if eps is not None:
        lo, hi = eps, 1.0 - eps
        return torch.where(torch.logical_and(self >= lo, self <= hi),
                           grad / (self * (1.0 - self)), torch.zeros_like(self))
    return torch.where(torch.logical_and(self >= 0.0, self <= 1.0),
                       grad / (self * (1.0 - self)), torch.full_like(self, float("nan")))


def gelu_double_backward(ggI, gO, input, approximate):
    if approximate == "tanh":
        kBeta = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5
        kKappa = 0.044715
        inner = kBeta * (input + kKappa * input.pow(3))
        tanh_inner = inner.tanh()
        sech2 = 1 - tanh_inner * tanh_inner
        d_inner = kBeta * (1 + 3 * kKappa * input * input)
        d2_inner = kBeta * 6 * kKappa * input
        left = 0.5 * input
        left_d = 0.5
        right_d = sech2 * d_inner
        right_dd = -2 * tanh_inner * sech2 * d_inner * d_inner + sech2 * d2_inner
        return ggI * gO * (2 * left_d * right_d + left * right_dd)
    kBeta = 2 / math.sqrt(math.pi) * 1 / math.sqrt(2.0) * 0.5
    input_pdf = (-0.5 * input * input).exp() * kBeta
    return ggI * gO * (2 * input_pdf - input * input * input_pdf)


def log_sigmoid_double_backward(grad, input):
    z = input.sigmoid()
    return grad * (z - 1) * z


def softplus_double_backward(grad, input, beta, threshold):
    z = (input * beta).sigmoid()
    return grad * z * (1 - z) * ((input * beta) < threshold).to(grad.dtype) * beta


def elu_double_backward(grad, grad_output, alpha, scale, input_scale, is_result, self_or_result):
    """d/dx of elu_backward (only its negative branch depends on x)."""
    neg = (self_or_result < 0).to(grad.dtype)
    if is_result:
        return grad * grad_output * input_scale * neg
    return grad * grad_output * input_scale * input_scale * alpha * scale * \
        (self_or_result * input_scale).exp() * neg


def copysign_tensor_self_backward(grad, self, result):
    ratio = result / self
    return grad * ratio.masked_fill(self == 0, 0)


def rad2deg_backward(grad):
    return grad * (180.0 / math.pi)


def deg2rad_backward(grad):
    return grad * (math.pi / 180.0)


def sinc_backward(grad, self):
    torch = _torch()
    x_pi = self * math.pi
    x2_pi = self * self * math.pi
    out = grad * (x_pi * x_pi.cos() - x_pi.sin()) / m_conj(x2_pi)
    return torch.where(x2_pi == 0.0, torch.zeros((), dtype=grad.dtype), out)


def mvlgamma_backward(grad, self, p):
    torch = _torch()
    args = torch.arange(-p / 2.0 + 0.5, 0.5, 0.5, dtype=self.dtype).add(self.unsqueeze(-1))
    return grad * args.digamma().sum(-1)


def log1p_backward(grad, self):
    return grad / m_conj(self + 1)


def angle_backward(grad, self):
    """angle is piecewise constant on real inputs; on complex ones, grad * i z / |z|^2 made real."""
    torch = _torch()
    if not self._dtype.is_complex:
        return torch.zeros_like(self)
    return torch.where(self == 0.0, torch.zeros((), dtype=self.dtype),
                       grad * self / self.abs().pow(2) * 1j)


def _to_copy_backward(grad, self_options):
    if not self_options.dtype_.is_complex and grad._dtype.is_complex:
        grad = _torch().real(grad)
    return grad.to(self_options.dtype_)


def sgn_backward(x, gx, sgn):
    torch = _torch()
    if not x._dtype.is_complex:
        return torch.zeros_like(x)
    abs_ = x.abs()
    return ((gx - sgn * torch.real(gx * sgn.conj())) / abs_).masked_fill_(abs_ == 0.0, 0.0)


def atan2_backward(grad, self, other, mask):
    recip = (self * self + other * other).reciprocal()
    return (grad * other * recip if mask[0] else None,
            grad * -self * recip if mask[1] else None)


def polar_backward(grad, result):
    """(grad_abs, grad_angle) of polar(abs, angle) = abs * exp(i angle) (FunctionsManual)."""
    torch = _torch()
    if grad is None:
        return None, None
    grad_conj = grad.conj()
    return (torch.real(grad_conj * torch.sgn(result)), torch.real(grad_conj * (result * 1j)))


def _divided_by_x_backward(grad, self, result, lead, shift):
    """grad * (lead(x) - result * shift(x)) for the Bessel I1 family, whose 1/x term is 0/0 at the
    origin: there (|x| <= eps) the slope is its limit 1/2, and x is replaced by eps beforehand so
    the unused branch is finite (where's backward still differentiates it)."""
    torch = _torch()
    eps = torch.finfo(self.dtype).eps
    not_tiny = self.abs() > eps
    safe = torch.where(not_tiny, self, torch.full((), eps, dtype=self.dtype))
    slope = lead(safe) - result * shift(safe)
    return grad * torch.where(not_tiny, slope, torch.full((), 0.5, dtype=self.dtype))


def i1_backward(grad, self, result):
    """I1'(x) = I0(x) - I1(x) / x."""
    return _divided_by_x_backward(grad, self, result, lambda x: x.i0(), lambda x: x.reciprocal())


def i1e_backward(grad, self, result):
    """d/dx e^-|x| I1(x) = i0e(x) - i1e(x) (sgn x + 1/x)."""
    torch = _torch()
    return _divided_by_x_backward(grad, self, result, torch.special.i0e,
                                  lambda x: x.sgn() + x.reciprocal())
