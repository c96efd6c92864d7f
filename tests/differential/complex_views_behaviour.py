"""Lazy conjugate and negative views, probed identically on upstream torch and on ours (each in
its own process): which tensors carry the bits, what aliases what, the values read through them,
writes through them, the Conjugate/Negative fallbacks around other operators, autograd, errors.

``python complex_views_behaviour.py`` prints one JSON object: case name -> result (complex values
as [re, im] float64 pairs, errors as "Type: message", an exception escaping a case as
"EXC Type: message"). Only torch's public API is used (plus ``_is_view``/``_base``/``_neg_view``
and ``_set_conj``, which upstream's own tests use).
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent / "harness"))
from prelude import err as _err, main, run_cases  # noqa: E402


def _c(t):
    """A tensor's values as [re, im] pairs (via tolist: the values a user reads)."""
    flat = t.detach().reshape(-1).tolist()
    return [[float(complex(v).real), float(complex(v).imag)] for v in flat]


def _bits(t):
    return [t.is_conj(), t.is_neg(), t._is_view()]


def cases(torch):
    cd = torch.complex128

    def cx(*vals):
        return torch.from_numpy(np.array(vals, dtype=np.complex128))

    def x3():
        return cx(1 + 2j, -3 - 4j, 5.5 - 0.25j)

    c = {}

    def case(fn):
        c[fn.__name__] = fn
        return fn

    # --- what conj() and _neg_view() return ----------------------------------------------------
    @case
    def conj_is_a_view_with_the_bit():
        x = x3()
        v = x.conj()
        return _bits(v) + [v._base is x, v.data_ptr() == x.data_ptr(), _c(v), _bits(x)]

    @case
    def conj_of_conj_clears_the_bit():
        x = x3()
        v = x.conj().conj()
        return _bits(v) + [v._base is x, _c(v)]

    @case
    def conj_of_real_is_itself():
        r = torch.tensor([1.0, -2.0], dtype=torch.float64)
        return [r.conj() is r, r.conj().is_conj(), torch.conj(r) is r,
                _err(lambda: torch._C._set_conj(r, True))[:60]]

    @case
    def neg_view():
        x = x3()
        n = torch._neg_view(x)
        r = torch._neg_view(torch.tensor([1.0, -2.0], dtype=torch.float64))
        return _bits(n) + [n._base is x, _c(n), _bits(r), r.tolist(), _bits(n + 1), _c(n + 1)]

    @case
    def neg_and_conj_together():
        x = x3()
        b = torch._neg_view(x.conj())
        return [_bits(b), _c(b), _bits(b.conj()), _c(b.conj()), _bits(b.resolve_conj()),
                _bits(b.resolve_neg()), _c(b.resolve_neg())]

    @case
    def views_of_a_conj_view_keep_the_bit():
        x = torch.from_numpy((np.arange(6) + 1j * np.arange(6, 12)).reshape(2, 3))
        v = x.conj()
        outs = [v[1], v[:, 1:], v.t(), v.reshape(3, 2), v.view(6), v.unsqueeze(0),
                v.expand(2, 2, 3), v.diagonal(), v.select(1, 2), v.flatten(), v.permute(1, 0),
                v.narrow(1, 0, 2), v.unbind(0)[1], v.split(1, 1)[2], v.contiguous(),
                v.mT, v.movedim(0, 1)]
        return [[_bits(o), o._base is x, _c(o)] for o in outs]

    @case
    def detach_keeps_the_bit():
        v = x3().conj()
        d = v.detach()
        return _bits(d) + [d.data_ptr() == v.data_ptr(), _c(d)]

    @case
    def clone_and_resolve_materialize():
        x = x3()
        v = x.conj()
        cl, rc, rn = v.clone(), v.resolve_conj(), v.resolve_neg()
        return [_bits(cl), _c(cl), cl.data_ptr() == x.data_ptr(), _bits(rc), _c(rc),
                rn is v, x.resolve_conj() is x, _bits(torch.empty_like(v)),
                _bits(torch.zeros_like(v)), _c(torch.ones_like(v))]

    @case
    def python_values():
        v = x3().conj()
        n = torch._neg_view(x3())
        return [_c(torch.tensor(v.tolist())), [v[1].item().real, v[1].item().imag],
                [n[0].item().real, n[0].item().imag], repr(v), repr(n),
                _c(torch.from_numpy(v.numpy(force=True))) if hasattr(v, "numpy") else None]

    # --- writing through the bits ----------------------------------------------------------------
    @case
    def base_written_view_reads_conjugated():
        x = x3()
        v = x.conj()
        x.add_(1j)
        return _c(v)

    @case
    def inplace_on_conj_view_writes_the_base():
        x = x3()
        v = x.conj()
        v.mul_(torch.tensor(2 + 1j, dtype=cd))
        out = [_c(x), _bits(v)]
        v.add_(torch.ones(3, dtype=cd))
        out.append(_c(x))
        v.zero_()
        out.append(_c(x))
        v.fill_(1 - 2j)
        return out + [_c(x), _c(v)]

    @case
    def copy_into_and_out_of_a_conj_view():
        x = x3()
        v = x.conj()
        v.copy_(cx(1j, 2, 3 + 3j))
        out = [_c(x), _bits(v)]
        d = torch.zeros(3, dtype=cd)
        d.copy_(v)
        out += [_c(d), _bits(d)]
        f = torch.zeros(3, dtype=torch.float64)
        f.copy_(x.conj().real)
        out.append(f.tolist())
        y = torch.zeros(3, dtype=torch.complex64)
        y.copy_(x.conj())
        return out + [_c(y)]

    @case
    def out_argument_that_is_a_conj_view():
        q = torch.zeros(3, dtype=cd)
        r = torch.add(x3(), 1, out=q.conj())
        return [_c(q), _bits(r), r._base is q]

    @case
    def inplace_on_neg_view():
        x = x3()
        n = torch._neg_view(x)
        n.add_(1)
        out = [_c(x), _bits(n)]
        n.neg_()
        return out + [_c(x), _c(n)]

    @case
    def conj_physical_on_a_conj_view():
        x = x3()
        v = x.conj()
        p = torch.conj_physical(v)
        out = [_bits(p), _c(p)]
        v.conj_physical_()
        return out + [_c(x), _c(v), _bits(v)]

    @case
    def real_and_imag_of_a_conj_view():
        x = x3()
        v = x.conj()
        re, im = v.real, v.imag
        out = [_bits(re), _bits(im), re.tolist(), im.tolist(), im._base is x]
        im.add_(10)
        return out + [_c(x), _err(lambda: x3().conj().imag.numpy())]

    # --- errors ----------------------------------------------------------------------------
    @case
    def refusals_on_unresolved_views():
        v = x3().conj()
        n = torch._neg_view(x3())
        return [_err(lambda: torch.view_as_real(v)), _err(lambda: v.numpy()),
                _err(lambda: v.view(torch.float64)), _err(lambda: n.numpy()),
                _err(lambda: n.view(torch.float64)), _c(torch.view_as_real(n)[..., 0]),
                _bits(torch.view_as_real(n)), _err(lambda: torch.view_as_real(v.resolve_conj()))]

    # --- other operators see the values -----------------------------------------------------
    @case
    def operators_read_resolved_values():
        x = x3()
        v = x.conj()
        m = torch.from_numpy((np.arange(4) - 2j * np.arange(4)).reshape(2, 2))
        mv = m.conj()
        outs = [v + 1, v * x, v.sum(), v.abs(), v.exp(), torch.cat([v, x]), torch.stack([v, x]),
                v[torch.tensor([2, 0])], torch.where(torch.tensor([True, False, True]), v, x),
                mv @ m, mv @ mv, torch.mm(mv, mv.t()), torch.dot(v, x), torch.vdot(v, x),
                v.to(torch.complex64), v.cumsum(0), v.flip(0), v.roll(1), v.sgn(), v.sqrt(),
                torch.linalg.vector_norm(v), v.mean(), v.prod(), torch.neg(v), v.reciprocal()]
        return [[_bits(o), _c(o)] for o in outs] + [
            torch.equal(v, x.conj().resolve_conj()), torch.allclose(v, x.conj()),
            bool((v == x).any()), (v == v.resolve_conj()).tolist()]

    @case
    def conj_views_under_autograd():
        x = x3().requires_grad_()
        w = cx(1 - 1j, 2 + 0.5j, -1 + 3j)
        v = x.conj()
        n = torch._neg_view(x)
        out = [v.grad_fn.name(), n.grad_fn.name(), v.resolve_conj().grad_fn.name(), _bits(v)]
        ((v * w).abs().sum() + (n * w).real.sum()).backward()
        return out + [_c(x.grad)]

    @case
    def inplace_on_conj_view_under_autograd():
        x = x3().requires_grad_()
        w = cx(1 - 1j, 2 + 0.5j, -1 + 3j)
        y = x.clone()
        v = y.conj()
        v.mul_(w)
        out = [y.grad_fn.name(), _bits(v)]
        (y.abs().sum() + (v * w).real.sum()).backward()
        return out + [_c(x.grad), _c(y.detach())]

    @case
    def grad_fn_of_a_conj_view_after_inplace():
        y = x3().requires_grad_().clone()
        v = y.conj()
        v.mul_(2)
        return v.grad_fn.name()

    @case
    def gradients_are_conjugated():
        x = x3().requires_grad_()
        g = torch.autograd.grad(x.conj().real.sum() + 2 * x.conj().imag.sum(), x)[0]
        return _c(g)

    @case
    def gradcheck_through_lazy_views():
        x = x3().requires_grad_()

        def f(t):
            return (t.conj() * t.exp()).sum() + torch._neg_view(t).conj()[1:].prod()

        return [torch.autograd.gradcheck(f, (x,)), torch.autograd.gradgradcheck(f, (x,))]

    @case
    def forward_ad_vmap_and_func_grad():
        import torch.autograd.forward_ad as fwAD

        with fwAD.dual_level():
            d = fwAD.make_dual(cx(1 + 2j, 3j), cx(1j, 1))
            tangent = fwAD.unpack_dual((d.conj() * 2).sum()).tangent
        batched = torch.func.vmap(lambda t: t.conj() * 2)(cx(1 + 1j, 2j).reshape(2, 1))
        g = torch.func.grad(lambda t: (t.conj() * t).real.sum())(cx(1 + 1j, 2j))
        return [_c(tangent), _c(batched), _c(g)]

    @case
    def python_scalars_and_setitem():
        c = cx(1 + 2j).reshape(()).conj()
        n = torch._neg_view(torch.tensor(3.5, dtype=torch.float64))
        v = x3().conj()
        v[0] = 5j
        w = torch.zeros(2, dtype=cd)
        w.conj()[1] = 1j
        return [[complex(c).real, complex(c).imag], float(n), int(n), bool(n), _c(v), _c(w),
                _c(v[torch.tensor([True, False, True])])]

    # --- set bits, save and load ---------------------------------------------------------------
    @case
    def set_conj_flips_the_bit_in_place():
        t = x3()
        torch._C._set_conj(t, True)
        out = [_bits(t), _c(t)]
        torch._C._set_conj(t, False)
        return out + [_bits(t), _c(t)]

    @case
    def save_and_load_keep_the_bits():
        buf = io.BytesIO()
        x = x3()
        torch.save({"c": x.conj(), "n": torch._neg_view(x), "x": x}, buf)
        buf.seek(0)
        d = torch.load(buf)
        return [_bits(d["c"]), _c(d["c"]), _bits(d["n"]), _c(d["n"]), _c(d["x"]),
                d["c"].data_ptr() == d["x"].data_ptr()]

    @case
    def a_dispatch_mode_sees_the_fallback():
        from torch.utils._python_dispatch import TorchDispatchMode

        seen = []

        class Log(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                seen.append(str(func))
                return func(*args, **(kwargs or {}))

        x = x3()
        with Log():
            v = x.conj()
            r = v + 1
            v.mul_(2)
        return [seen, _c(r), _c(x)]

    return c


def probes(torch):
    return run_cases(cases(torch))


if __name__ == "__main__":
    main(probes)
