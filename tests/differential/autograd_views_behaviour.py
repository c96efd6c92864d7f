"""Views and in-place operations under autograd, probed identically on upstream torch and on ours
(each in its own process): which grad_fn each tensor has, the gradients, and the errors.

``python autograd_views_behaviour.py`` prints one JSON object: case name -> result (numbers as
float64 lists, errors as "Type: message", an exception escaping a case as "EXC Type: message").
Only torch's public API is used (plus ``_version``/``_is_view``/``_base``, which upstream's own
tests read).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

# run as a file under upstream, the script finds the shared behaviour helpers in harness/
sys.path.insert(0, str(Path(__file__).resolve().parent / "harness"))
from prelude import edges as _edges, err as _err, main, run_cases, vals as _vals  # noqa: E402


def _name(t):
    return None if t.grad_fn is None else t.grad_fn.name()


def cases(torch):
    d = torch.float64

    def const(*vals):
        return torch.from_numpy(np.array(vals, dtype=np.float64))

    def leaf(*vals):
        return const(*vals).requires_grad_()

    c = {}

    def case(fn):
        c[fn.__name__] = fn
        return fn

    # --- a view of a base that is modified in place ------------------------------------------
    @case
    def base_modified_view_made_before_history():
        x = leaf(1.0, 2.0, 3.0, 4.0)
        base = torch.zeros(4, dtype=d)
        v = base[:2]
        out = [_name(v), v.requires_grad, v.is_leaf]
        base.copy_(x * 2)
        out += [_name(base), _name(v), v.requires_grad, v.is_leaf]
        (v * v).sum().backward()
        return out + [_vals(x.grad)]

    @case
    def base_modified_two_views():
        x = leaf(1.0, 2.0, 3.0)
        y = x * 2
        v, v2 = y[1:], y[:2]
        y.add_(1)
        out = [_name(v), _name(v2), _name(y), _edges(v.grad_fn)]
        return out + [_vals(torch.autograd.grad((v * v2).sum(), x)[0])]

    @case
    def view_modified_base_used():
        x = leaf(1.0, 2.0, 3.0, 4.0)
        base = x.clone()
        v = base.view(2, 2)[0]
        v.exp_()
        out = [_name(base), _name(v), _edges(base.grad_fn)]
        base.sum().backward()
        return out + [_vals(x.grad)]

    @case
    def two_views_one_modified():
        x = leaf(1.0, 2.0, 3.0, 4.0)
        base = x * 1
        v, w = base[1:3], base[2:]
        v.mul_(3)
        out = [_name(base), _name(v), _name(w), _edges(w.grad_fn)]
        (w * w).sum().backward(retain_graph=True)
        out.append(_vals(x.grad))
        x.grad = None
        (base ** 2).sum().backward()
        return out + [_vals(x.grad)]

    @case
    def view_of_view_modified():
        x = leaf(1.0, 2.0, 3.0, 4.0)
        base = x.clone()
        v = base.view(2, 2)
        t = v.t()
        t[0].mul_(2)
        return [_name(base), _name(v), _name(t), v._base is base, t._base is base,
                _vals(torch.autograd.grad(v.sum(), x)[0])]

    @case
    def view_modified_by_other_tensor():
        a, w = leaf(1.0, 2.0, 3.0), leaf(0.5, -2.0)
        b = a.clone()
        b.unsqueeze(0).squeeze(0)[1:].mul_(w)
        g = torch.autograd.grad((b * b).sum(), [a, w])
        return [_name(b), _edges(b.grad_fn)] + [_vals(t) for t in g]

    @case
    def expanded_view_of_rebased_base():
        x = leaf(1.0, 2.0, 3.0)
        base = x * 1
        v = base.expand(2, 3)
        base.mul_(2)
        v.sum().backward()
        return [_name(v), _vals(x.grad)]

    @case
    def strided_view_rebased():
        x = leaf(*range(1, 13))
        base = (x * 1).view(3, 4)
        v = base.t()[1:3, ::2]
        base[:, 0].mul_(10)
        (v * v).sum().backward()
        return [_name(v), _vals(x.grad)]

    @case
    def double_backward_through_copyslices():
        x, w = leaf(0.5, 1.5, -1.0), leaf(2.0, -0.5)
        base = x * 1
        base[1:].mul_(w)
        v = base.view(3, 1)
        g = torch.autograd.grad((base ** 2).sum() + (v ** 3).sum(), [x, w], create_graph=True)
        gg = torch.autograd.grad(g[0].sum() + g[1].sum(), [x, w])
        return [_vals(t) for t in g + gg]

    @case
    def tensor_hook_on_rebased_view():
        x = leaf(1.0, 2.0, 3.0, 4.0)
        b = x * 1
        v = b.view(2, 2)
        b.mul_(2)
        out = [_name(v)]
        v.register_hook(lambda g: g * 10)
        v.sum().backward()
        return out + [_vals(x.grad)]

    @case
    def retain_grad_on_rebased_view():
        x = leaf(1.0, 2.0, 3.0, 4.0)
        b = x * 1
        v = b[:2]
        v.retain_grad()
        b.mul_(2)
        v.sum().backward()
        return [_vals(v.grad), _vals(x.grad), _name(v), v.retains_grad]

    @case
    def hooks_and_retain_grad_after_inplace():
        x = leaf(1.0, 2.0)
        a = x * 2
        a.register_hook(lambda g: g * 100)
        a.retain_grad()
        a.add_(1)
        a.register_hook(lambda g: g + 1)
        a.sum().backward()
        return [_vals(x.grad), _vals(a.grad), _name(a)]

    # --- errors ----------------------------------------------------------------------------
    @case
    def view_of_leaf_errors():
        x = leaf(1.0, 2.0, 3.0)
        return [_err(lambda: x[0:2].add_(1)), _err(lambda: x.view(3).mul_(2)),
                _err(lambda: x.unsqueeze(0).squeeze(0).zero_())]

    @case
    def stale_view_is_leaf_to_check_inplace():
        x = leaf(1.0, 2.0, 3.0, 4.0)
        base = torch.zeros(4, dtype=d)
        v = base[:2]
        base.copy_(x * 1)
        return _err(lambda: v.mul_(2))

    @case
    def nograd_view_modified_in_grad_mode():
        x = leaf(1.0, 2.0, 3.0)
        b = x * 2
        with torch.no_grad():
            v = b[:2]
        return [_name(v), v.requires_grad, v._is_view(), v.is_leaf, _err(lambda: v.mul_(2))]

    @case
    def nograd_view_of_leaf_modified():
        x = leaf(1.0, 2.0, 3.0)
        with torch.no_grad():
            v = x[:2]
        return [_name(v), v.requires_grad, _err(lambda: v.mul_(2))]

    @case
    def nograd_view_modified_in_nograd_then_read():
        x = leaf(1.0, 2.0, 3.0)
        b = x * 2
        with torch.no_grad():
            v = b[:2]
            v.mul_(2)
        return [_err(lambda: v.grad_fn), _vals(b)]

    @case
    def view_of_nograd_view():
        x = leaf(1.0, 2.0, 3.0)
        b = x * 2
        with torch.no_grad():
            v = b[:2]
        w = v[1:]
        return [_name(w), _err(lambda: w.mul_(2))]

    @case
    def nograd_view_used_in_grad_mode():
        x = leaf(1.0, 2.0)
        b = x * 2
        with torch.no_grad():
            v = b[:1]
        y = v * 3
        out = [y.requires_grad, _name(y), v.is_leaf, _edges(y.grad_fn)]
        y.sum().backward()
        return out + [_vals(x.grad), _err(lambda: v.retain_grad())]

    @case
    def views_made_before_requires_grad():
        x = leaf(1.0, 2.0)
        base = torch.zeros(2, dtype=d)
        base.copy_(x)
        with torch.no_grad():
            v = base[:1]
        base2 = torch.zeros(2, dtype=d)
        v2 = base2[:1]
        base2.requires_grad_()
        return [_name(v), v.requires_grad, _name(v2), v2.requires_grad]

    @case
    def leaf_modified_in_nograd_view_read():
        x = leaf(1.0, 2.0, 3.0)
        v = x[:2]
        with torch.no_grad():
            x.add_(1)
        out = [_name(v), _edges(v.grad_fn)]
        v.sum().backward()
        return out + [_vals(x.grad)]

    @case
    def inference_mode_views():
        x = leaf(1.0, 2.0, 3.0)
        with torch.inference_mode():
            b = torch.ones(3, dtype=d)
            v = b[:2]
        return [_err(lambda: v.mul_(2)), _err(lambda: v.mul_(x[:2])),
                _err(lambda: b.add_(1))]

    @case
    def inference_mode_view_of_normal_tensor():
        x = leaf(1.0, 2.0, 3.0)
        b = x * 2
        with torch.inference_mode():
            v = b[:2]
        return [v.is_inference(), v.requires_grad, _err(lambda: v.mul_(2)),
                _err(lambda: v.grad_fn)]

    @case
    def multi_output_views_modified():
        out = []
        for fn in ("unbind", "split", "chunk", "split_with_sizes"):
            x = leaf(1.0, 2.0, 3.0, 4.0)
            b = x * 1
            parts = {"unbind": lambda: b.unbind(0), "split": lambda: b.split(2),
                     "chunk": lambda: b.chunk(2),
                     "split_with_sizes": lambda: b.split_with_sizes([1, 3])}[fn]()
            out += [_name(parts[0]), _err(lambda: parts[0].mul_(2)),
                    _err(lambda: parts[1].view(-1).mul_(2))]
        return out

    @case
    def multi_output_base_modified():
        x = leaf(1.0, 2.0, 3.0, 4.0)
        b = x * 1
        parts = b.split(2)
        return [_err(lambda: b.mul_(2)), _err(lambda: parts[0].grad_fn),
                _err(lambda: parts[0].sum().backward())]

    @case
    def multi_output_views_without_grad():
        x = leaf(1.0, 2.0, 3.0, 4.0)
        with torch.no_grad():
            parts = (x * 1).unbind(0)
        b = torch.zeros(4, dtype=d)
        p = b.unbind(0)
        return [_err(lambda: parts[0].mul_(2)), _err(lambda: p[0].mul_(x[0]))]

    # --- detach, .data -----------------------------------------------------------------------
    @case
    def detach_shares_version():
        x = leaf(1.0, 2.0, 3.0)
        y = x * 2
        dt = y.detach()
        out = [dt._version, y._version, dt._is_view(), dt.requires_grad]
        dt.add_(1)
        out += [dt._version, y._version]
        s = x.sigmoid()
        s.detach().mul_(2)
        return out + [_err(lambda: s.sum().backward())]

    @case
    def data_semantics():
        x = leaf(1.0, 2.0, 3.0)
        y = x.sigmoid()
        dd = y.data
        out = [dd.requires_grad, dd._version, dd._is_view(), _name(dd)]
        dd.mul_(2)
        out += [y._version, dd._version]
        y.sum().backward()
        out.append(_vals(x.grad))
        x.data = const(5.0, 6.0)
        out += [_vals(x), x.requires_grad, x.shape[0], x.grad is None]
        return out

    # --- custom Functions ---------------------------------------------------------------
    @case
    def function_returns_input_as_is():
        class Ident(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = leaf(1.0, 2.0)
        b = x * 1
        y = Ident.apply(b)
        out = [y is b, y._is_view(), y._base is b, _name(y)]
        out.append(_err(lambda: y.mul_(2)))
        y.sum().backward()
        return out + [_vals(x.grad)]

    @case
    def function_returns_view_of_input():
        class View(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a.view(-1)

            @staticmethod
            def backward(ctx, g):
                return g * 3

        x = leaf(1.0, 2.0)
        y = View.apply(x * 1)
        return [y._is_view(), _name(y), _err(lambda: y.add_(1))]

    @case
    def function_mark_dirty_on_view():
        class Double(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                a.mul_(2)
                ctx.mark_dirty(a)
                return a

            @staticmethod
            def backward(ctx, g):
                return g * 2

        x = leaf(1.0, 2.0, 3.0)
        b = x * 1
        v = b[1:]
        r = Double.apply(v)
        out = [r is v, _name(b), _name(v)]
        (b * b).sum().backward()
        return out + [_vals(x.grad)]

    @case
    def setitem_into_buffer_views():
        x = leaf(1.0, 2.0, 3.0, 4.0)
        buf = torch.zeros(2, 4, dtype=d)
        row = buf[1]
        buf[0] = x * 2
        buf[1, 1:3] = x[:2] ** 2
        out = [_name(buf), _name(row)]
        (buf.sum() + (row * row).sum()).backward()
        return out + [_vals(x.grad)]

    return c


def probes(torch):
    return run_cases(cases(torch))


if __name__ == "__main__":
    main(probes)
