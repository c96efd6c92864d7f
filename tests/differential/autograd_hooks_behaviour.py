"""The extension points of autograd users rely on, probed identically on upstream torch and on
ours (each in its own process): saved-tensor hooks and saved attributes, the Node API, module
hooks, checkpointing, anomaly mode, batched gradients and torch.autograd.functional.

``python autograd_hooks_behaviour.py`` prints one JSON object: case name -> result (numbers as
float64 lists, errors as "Type: message", an exception escaping a case as "EXC Type: message").
"""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import numpy as np

# run as a file under upstream, the script finds the shared behaviour helpers in harness/
sys.path.insert(0, str(Path(__file__).resolve().parent / "harness"))
from prelude import edges as _edges, err as _err, main, run_cases, vals as _vals  # noqa: E402


def _frames(stack):
    """A stored forward traceback as (file name, line) of this file's frames (the rest differs
    between the two installations by path only)."""
    here = os.path.basename(__file__)
    out = []
    for entry in stack:
        first = entry.strip().splitlines()[0]
        if here in first:
            out.append(first.split(", in ")[0].split(", line ")[1])
    return out


def cases(torch):
    d = torch.float64
    F = torch.nn.functional

    def const(vals):
        return torch.from_numpy(np.array(vals, dtype=np.float64))

    def leaf(*vals):
        return const(list(vals)).requires_grad_()

    c = {}

    def case(fn):
        c[fn.__name__] = fn
        return fn

    # --- saved tensors ----------------------------------------------------------------------
    @case
    def saved_tensors_hooks_pack_unpack():
        x = leaf(1.0, 2.0, 3.0)
        log = []

        def pack(t):
            log.append(["pack", list(t.shape), t.requires_grad, torch.is_grad_enabled()])
            return t * 1

        def unpack(t):
            log.append(["unpack", list(t.shape)])
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x * x).exp() * 2.0
        y.sum().backward()
        return [log, _vals(x.grad)]

    @case
    def saved_tensors_hooks_double_backward():
        x = leaf(0.5, -1.0)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = (x.sin() * x).sum()
        g, = torch.autograd.grad(y, x, create_graph=True)
        gg, = torch.autograd.grad(g.sum(), x)
        return [_vals(g), _vals(gg)]

    @case
    def saved_tensors_hooks_not_version_checked():
        x = leaf(1.0, 2.0)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = x * 1
            z = y * y
        y.add_(1)
        z.sum().backward()
        return _vals(x.grad)

    @case
    def pack_hook_modifying_input():
        x = leaf(1.0, 2.0)
        y = x * 1

        def pack(t):
            t.add_(1)
            return t

        def run():
            with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
                y * y

        return _err(run)

    @case
    def unpack_hook_returning_non_tensor():
        x = leaf(1.0, 2.0)
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 5):
            y = x * x
        return _err(lambda: y.sum().backward())

    @case
    def save_on_cpu():
        x = leaf(1.0, 2.0, 3.0)
        with torch.autograd.graph.save_on_cpu():
            y = (x.sin() * x).sum()
        y.backward()
        with torch.autograd.graph.save_on_cpu(pin_memory=False):
            z = (x.exp() * x).sum()
        g, = torch.autograd.grad(z, x)
        return [_vals(x.grad), _vals(g)]

    @case
    def disable_saved_tensors_hooks():
        x = leaf(1.0, 2.0)
        with torch.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            e1 = _err(lambda: torch.autograd.graph.saved_tensors_hooks(
                lambda t: t, lambda t: t).__enter__())
            y = x * x
        enabled = torch._C._autograd._saved_tensors_hooks_is_enabled()

        def inner():
            with torch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                with torch.autograd.graph.disable_saved_tensors_hooks("msg2"):
                    pass

        e2 = _err(inner)
        y.sum().backward()
        return [e1, e2, enabled, torch._C._autograd._saved_tensors_hooks_is_enabled(),
                _vals(x.grad)]

    @case
    def saved_attributes():
        x, w = leaf(1.0, 2.0), leaf(3.0, 4.0)
        y = x * w
        fn = y.grad_fn
        out = [_vals(fn._saved_self), _vals(fn._saved_other), fn._saved_self is x,
               fn._saved_other is w, type(fn._raw_saved_self).__name__]
        z = x.exp()
        out += [_vals(z.grad_fn._saved_result), z.grad_fn._saved_result is z,
                z.grad_fn._saved_result.grad_fn is z.grad_fn]
        out += [list(x.sum().grad_fn._saved_self_sym_sizes)]
        p = x.pow(2)
        out += [p.grad_fn._saved_exponent, _vals(p.grad_fn._saved_self)]
        cat = torch.cat([x, w], 0)
        out.append(cat.grad_fn._saved_dim)
        out.append(sorted(a for a in dir(fn) if a.startswith(("_saved", "_raw_saved"))))
        out.append(sorted(a for a in dir(cat.grad_fn) if a.startswith(("_saved", "_raw"))))
        only_x = x * const([3.0, 4.0])
        out.append([_vals(only_x.grad_fn._saved_other), only_x.grad_fn._saved_self is None])
        y.sum().backward()
        out += [_err(lambda: fn._saved_self), _err(lambda: fn._raw_saved_self),
                _err(lambda: y.sum().backward())]
        return out

    @case
    def raw_saved_tensor_hooks():
        x = leaf(1.0, 2.0)
        y = x * x
        raw = y.grad_fn._raw_saved_self
        log = []
        raw.register_hooks(lambda t: (log.append("pack"), t.clone())[1],
                           lambda t: (log.append("unpack"), t)[1])
        again = _err(lambda: raw.register_hooks(lambda t: t, lambda t: t))
        y.sum().backward()
        freed = _err(lambda: raw.register_hooks(lambda t: t, lambda t: t))
        return [log, _vals(x.grad), again, freed]

    @case
    def backward_twice_errors():
        x = leaf(1.0, 2.0)
        y = (x * x).exp().sum()
        y.backward()
        e1 = _err(lambda: y.backward())
        z = (x * x).sum()
        g, = torch.autograd.grad(z, x, retain_graph=True)
        z.backward()
        return [e1, _vals(g), _vals(x.grad)]

    # --- the Node API ----------------------------------------------------------------------
    @case
    def node_api():
        x = leaf(1.0, 2.0)
        y = (x * 2).sin()
        fn = y.grad_fn
        acc = fn.next_functions[0][0].next_functions[0][0]
        out = [fn.name(), type(fn).__name__, _edges(fn),
               isinstance(fn, torch.autograd.graph.Node),
               issubclass(type(fn), torch.autograd.graph.Node),
               isinstance(x, torch.autograd.graph.Node), fn.metadata == {},
               acc.name(), isinstance(acc, torch.autograd.graph.Node), acc.variable is x,
               [list(m.shape) for m in fn._input_metadata] if hasattr(fn, "_input_metadata")
               else None]
        fn.metadata["k"] = 1
        out.append(y.grad_fn.metadata)
        log = []
        h1 = fn.register_prehook(lambda go: log.append(["pre", _vals(go[0])]))
        h2 = fn.register_hook(lambda gi, go: log.append(["post", _vals(gi[0]), _vals(go[0])]))
        y.sum().backward(retain_graph=True)
        h1.remove()
        h2.remove()
        y.sum().backward()
        return out + [log, _vals(x.grad)]

    @case
    def node_hooks_replace_gradients():
        x = leaf(1.0, 2.0)
        y = x * 3
        z = y.exp()
        hits = []
        z.grad_fn.register_prehook(lambda go: (go[0] * 0 + 1,))
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 2, None))
        y.register_hook(lambda g: hits.append(_vals(g)))
        z.sum().backward()
        acc_log = []
        w = leaf(5.0)
        (w * 2).grad_fn.next_functions[0][0].register_prehook(
            lambda go: acc_log.append(_vals(go[0])))
        (w * 2).sum().backward()
        return [hits, _vals(x.grad), acc_log, _vals(w.grad)]

    @case
    def custom_function_node():
        class Scale(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a, k):
                ctx.k = k
                return a * k

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None

        x = leaf(1.0, 2.0)
        y = Scale.apply(x, 3.0)
        fn = y.grad_fn
        log = []
        fn.register_hook(lambda gi, go: log.append([_vals(gi[0]), len(gi), _vals(go[0])]))
        y.sum().backward()
        return [fn.name(), _edges(fn), isinstance(fn, torch.autograd.graph.Node), log,
                _vals(x.grad)]

    @case
    def increment_version():
        x = leaf(1.0, 2.0)
        y = x.sigmoid()
        v0 = y._version
        torch.autograd.graph.increment_version(y)
        return [v0, y._version, _err(lambda: y.sum().backward())]

    @case
    def multi_grad_hook():
        a, b = leaf(1.0, 2.0), leaf(3.0, 4.0)
        seen = []
        h = torch.autograd.graph.register_multi_grad_hook(
            (a, b), lambda grads: seen.append([_vals(g) for g in grads]))
        (a * 2).sum().backward()
        (a * b).sum().backward()
        h.remove()
        (a * b).sum().backward()
        seen_any = []
        torch.autograd.graph.register_multi_grad_hook((a, b), lambda g: seen_any.append(_vals(g)),
                                                      mode="any")
        (a * b).sum().backward()
        return [seen, seen_any]

    @case
    def allow_mutation_on_saved_tensors():
        with torch.autograd.graph.allow_mutation_on_saved_tensors():
            x = leaf(1.0, 2.0, 3.0)
            y = x.clone()
            z = y * y
            y.mul_(2)
            z.sum().backward()
            return [_vals(x.grad), _vals(y)]

    @case
    def gradient_edge():
        x = leaf(1.0, 2.0)
        y = x * 2
        z = (y * y).sum()
        ge = torch.autograd.graph.get_gradient_edge(y)
        g, = torch.autograd.grad(z, ge)
        return [ge.node.name(), ge.output_nr, _vals(g)]

    # --- module hooks, checkpointing ---------------------------------------------------------
    def mlp():
        m = torch.nn.Sequential(torch.nn.Linear(3, 4, dtype=d), torch.nn.Tanh(),
                                torch.nn.Linear(4, 2, dtype=d))
        with torch.no_grad():
            for i, p in enumerate(m.parameters()):
                p.copy_(const(np.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1) * 0.3))
        return m

    def batch():
        return const([[1.0, -2.0, 0.5], [0.3, 0.2, -0.1]]).requires_grad_()

    @case
    def module_hooks():
        m = mlp()
        log = []
        m[0].register_full_backward_hook(
            lambda mod, gi, go: log.append(["full", [_vals(g) for g in gi],
                                            [_vals(g) for g in go]]))
        m[2].register_full_backward_pre_hook(
            lambda mod, go: log.append(["pre", [_vals(g) for g in go]]))
        m[1].register_full_backward_hook(lambda mod, gi, go: (gi[0] * 2,))
        m.register_forward_pre_hook(
            lambda mod, args, kwargs: (args, kwargs), with_kwargs=True)
        m[0].register_forward_hook(lambda mod, args, kwargs, out: out * 1.5, with_kwargs=True)
        m[2].register_forward_pre_hook(lambda mod, args: (args[0] + 0.1,))
        x = batch()
        y = m(x)
        y.pow(2).sum().backward()
        return [log, _vals(y), _vals(x.grad), [_vals(p.grad) for p in m.parameters()],
                y.grad_fn.name()]

    @case
    def module_hook_without_input_grad():
        m = mlp()
        log = []
        m[0].register_full_backward_hook(
            lambda mod, gi, go: log.append([gi[0] is None, _vals(go[0])]))
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            m(const([[1.0, -2.0, 0.5]])).sum().backward()
        return [log, [str(x.message)[:60] for x in w]]

    @case
    def module_hook_output_modified_inplace():
        lin = torch.nn.Linear(2, 2, dtype=d)
        lin.register_full_backward_hook(lambda *a: None)
        x = leaf(1.0, 2.0)
        y = lin(x)
        return [y.grad_fn.name(), y._is_view(), _err(lambda: lin(x).add_(1))]

    @case
    def checkpoint_reentrant_and_not():
        from torch.utils.checkpoint import checkpoint

        out = []
        for reentrant in (True, False):
            m = mlp()
            x = batch()

            def f(a, m=m):
                return m[2](m[1](m[0](a))).sin()

            y = checkpoint(f, x, use_reentrant=reentrant)
            y.sum().backward()
            out.append([_vals(y), _vals(x.grad), [_vals(p.grad) for p in m.parameters()],
                        y.grad_fn.name()])
        m = mlp()
        x = batch()
        y = m[2](m[1](m[0](x))).sin()
        y.sum().backward()
        out.append([_vals(y), _vals(x.grad), [_vals(p.grad) for p in m.parameters()]])
        return out

    @case
    def checkpoint_sequential_and_double_backward():
        from torch.utils.checkpoint import checkpoint, checkpoint_sequential

        m = mlp()
        x = batch()
        y = checkpoint_sequential(m, 2, x, use_reentrant=False)
        y.sum().backward()
        out = [_vals(x.grad), [_vals(p.grad) for p in m.parameters()]]
        a = leaf(0.3, -0.7)
        z = checkpoint(lambda t: (t.sin() * t).sum(), a, use_reentrant=False)
        g, = torch.autograd.grad(z, a, create_graph=True)
        gg, = torch.autograd.grad(g.sum(), a)
        return out + [_vals(g), _vals(gg)]

    # --- anomaly mode ----------------------------------------------------------------------
    @case
    def anomaly_mode():
        x = leaf(0.0, 1.0)
        out = []
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            with torch.autograd.detect_anomaly():
                y = x.sqrt() * 0
                out.append(_err(lambda: y.sum().backward()))
                out.append(_err(lambda: torch.autograd.grad((x * 2).log().sum(), x)))
            with torch.autograd.detect_anomaly(check_nan=False):
                out.append(_err(lambda: (x.sqrt() * 0).sum().backward()))
            out.append(torch.is_anomaly_enabled())
            torch.autograd.set_detect_anomaly(True)
            out.append([torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()])
            x2 = leaf(1.0, 2.0)
            h = x2 * 2
            q = h.sin()
            h.add_(1)
            out.append(_err(lambda: q.sum().backward()))
            stack = q.grad_fn.metadata.get("traceback_", [])
            out.append([_frames(stack)[-2:], "torchnative" in "".join(stack)])
            torch.autograd.set_detect_anomaly(False)
        out.append(sorted({str(m.message).split(".")[0] for m in w
                           if "Error detected" in str(m.message)}))

        class Bad(torch.autograd.Function):
            @staticmethod
            def forward(ctx, a):
                return a * 1

            @staticmethod
            def backward(ctx, g):
                return g * float("nan")

        with warnings.catch_warnings(record=True):
            warnings.simplefilter("always")
            with torch.autograd.detect_anomaly():
                out.append(_err(lambda: Bad.apply(leaf(1.0)).sum().backward()))
        return out

    # --- batched gradients, torch.autograd.functional ----------------------------------------
    @case
    def grads_batched():
        x = leaf(1.0, 2.0, 3.0)
        y = x ** 2
        g, = torch.autograd.grad(y, x, torch.eye(3, dtype=d), is_grads_batched=True)
        a, b = leaf(0.5, -1.0), leaf(2.0, 3.0)
        z = a.sin() * b
        v = const([[1.0, 0.0], [0.0, 1.0], [2.0, -1.0]])
        ga, gb = torch.autograd.grad(z, (a, b), v, is_grads_batched=True, retain_graph=True)
        gc = torch.autograd.grad(z, (a, b, leaf(1.0)), v, is_grads_batched=True,
                                 allow_unused=True, retain_graph=True)
        gcg = torch.autograd.grad(z, a, v, is_grads_batched=True, create_graph=True)[0]
        ggg, = torch.autograd.grad(gcg.sum(), a)
        return [_vals(g), list(g.shape), _vals(ga), _vals(gb), gc[2] is None, _vals(ggg),
                _err(lambda: torch.autograd.grad(x.sum() * 2, x, torch.ones(2, 3),
                                                 is_grads_batched=True))]

    @case
    def gradcheck_batched_grad():
        from torch.autograd import gradcheck, gradgradcheck

        a = leaf(0.3, 0.5, -0.2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [gradcheck(lambda t: t.sin() * t, (a,), check_batched_grad=True),
                    gradgradcheck(lambda t: t.sin() * t.exp(), (a,), check_batched_grad=True)]

    @case
    def functional():
        AF = torch.autograd.functional

        def fn(a, b):
            return (a.sin() * b ** 2).sum(0, keepdim=False), a * b

        def fs(a):
            return (a.exp() * a).sum() + (a ** 3 * const([1.0, 1.0, 0.0])).sum()

        a, b = const([0.5, -1.0, 2.0]), const([1.5, 0.2, -0.7])
        v = const([1.0, 2.0, -1.0])
        out = [[[_vals(j) for j in row] for row in AF.jacobian(fn, (a, b))]]
        out.append([[_vals(j) for j in row] for row in AF.jacobian(fn, (a, b), vectorize=True)])
        out.append(_vals(AF.hessian(fs, a)))
        out.append(_vals(AF.hessian(fs, a, vectorize=True)))
        o, vj = AF.vjp(fs, a)
        out.append([_vals(o), _vals(vj)])
        o, jv = AF.jvp(lambda t: t.sin() * t, a, v)
        out.append([_vals(o), _vals(jv)])
        o, hv = AF.hvp(fs, a, v)
        out.append([_vals(o), _vals(hv)])
        o, vh = AF.vhp(fs, a, v)
        out.append([_vals(o), _vals(vh)])
        j2 = AF.jacobian(lambda t: t.tanh() * t, a, create_graph=True)
        out.append([_vals(j2), j2.requires_grad])
        out.append(_err(lambda: AF.jacobian(lambda t: t.sum(), a, strict=True)))
        out.append(_err(lambda: AF.vjp(lambda t: t * 2, a)))
        return out

    return c


def probes(torch):
    return run_cases(cases(torch), after=lambda: torch.autograd.set_detect_anomaly(False))


if __name__ == "__main__":
    main(probes)
