"""Autograd behaviour probed identically on upstream torch and on ours (each in its own process):
error types and messages, hooks, custom Functions, double backward, grad modes, graph structure.

``python autograd_behaviour.py`` prints one JSON object: probe name -> result (numbers as
float64 lists, errors as "Type: message"). Only torch's public API is used.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

# run as a file under upstream, the script finds the shared behaviour helpers in harness/
sys.path.insert(0, str(Path(__file__).resolve().parent / "harness"))
from prelude import err as _err, main, vals as _vals  # noqa: E402


def probes(torch):
    F = torch.nn.functional
    d = torch.float64
    r = {}

    def const(vals):
        # through numpy: these probes are about autograd, not about torch.tensor's parsing
        return torch.from_numpy(np.array(vals, dtype=np.float64))

    def leaf(*vals):
        return const(list(vals)).requires_grad_()

    # --- errors -------------------------------------------------------------------------------
    x = leaf(1.0, 2.0, 3.0)
    r["err_leaf_inplace"] = _err(lambda: x.add_(1))
    r["err_view_leaf_inplace"] = _err(lambda: x[0:2].mul_(2))
    y = x * 2
    z = y.sin()
    y.add_(1)
    r["err_version"] = _err(lambda: z.sum().backward())
    y = x * 2
    s = y.sigmoid()
    s.mul_(2)
    r["err_version_output"] = _err(lambda: s.sum().backward())
    l = (x * x).sum()
    l.backward()
    r["err_twice"] = _err(lambda: l.backward())
    r["err_no_grad_fn"] = _err(lambda: torch.ones(3).sum().backward())
    r["err_int_requires_grad"] = _err(lambda: torch.ones(3, dtype=torch.long).requires_grad_())
    r["err_unused"] = _err(lambda: torch.autograd.grad((x * 2).sum(), [x, leaf(1.0)]))
    r["err_input_no_grad"] = _err(lambda: torch.autograd.grad((x * 2).sum(), [torch.ones(2)]))
    r["err_non_scalar"] = _err(lambda: (x * 2).backward())
    r["err_out"] = _err(lambda: torch.add(x, x, out=torch.empty(3, dtype=d)))
    r["err_nonleaf_requires_grad"] = _err(lambda: (x * 2).requires_grad_(False))
    r["err_retain_no_grad"] = _err(lambda: torch.ones(2).retain_grad())

    # --- accumulation, retain_grad, hooks ----------------------------------------------------
    x = leaf(1.0, -2.0, 3.0)
    w = leaf(0.5, 0.25, 2.0)
    for _ in range(2):
        ((x * w).exp().sum()).backward()
    r["accumulate"] = _vals(x.grad) + _vals(w.grad)
    x.grad = None
    h = x * w
    h.retain_grad()
    seen = []
    hook = h.register_hook(lambda g: seen.append(_vals(g)) or g * 2)
    out = (h * h).sum()
    out.backward()
    r["retain_grad"] = _vals(h.grad)
    r["tensor_hook"] = seen + [_vals(x.grad)]
    hook.remove()
    x.grad = None
    counts = []
    x.register_post_accumulate_grad_hook(lambda p: counts.append(_vals(p.grad)))
    x.register_hook(lambda g: g + 1)
    (x * 3).sum().backward()
    r["post_accumulate"] = counts
    a = leaf(1.0, 2.0)
    b = a * 3
    pre, post = [], []
    b.grad_fn.register_prehook(lambda go: pre.append(_vals(go[0])) or (go[0] * 10,))
    b.grad_fn.register_hook(lambda gi, go: post.append([_vals(gi[0]), _vals(go[0])]))
    b.sum().backward()
    r["node_hooks"] = [pre, post, _vals(a.grad)]

    # --- module hooks -----------------------------------------------------------------------
    lin = torch.nn.Linear(3, 2, dtype=d)
    with torch.no_grad():
        lin.weight.copy_(const([[0.1, 0.2, 0.3], [-0.4, 0.5, -0.6]]))
        lin.bias.copy_(const([0.05, -0.05]))
    got = []
    lin.register_full_backward_hook(lambda m, gi, go: got.append([_vals(gi[0]), _vals(go[0])]))
    lin.register_full_backward_pre_hook(lambda m, go: got.append([_vals(go[0])]))
    inp = const([[1.0, 2.0, 3.0]]).requires_grad_()
    lin(inp).tanh().sum().backward()
    r["module_hooks"] = got + [_vals(lin.weight.grad), _vals(lin.bias.grad), _vals(inp.grad)]

    # --- graph structure --------------------------------------------------------------------
    x = leaf(1.0, 2.0, 3.0)
    y = (x * 2).sigmoid().sum()
    names = []
    fn = y.grad_fn
    while fn is not None:
        names.append([fn.name(), [None if n is None else n.name() for n, _ in fn.next_functions]])
        fn = next((n for n, _ in fn.next_functions if n is not None), None)
    r["graph"] = names
    m = x * const(2.0)
    r["saved_attrs"] = [_vals(m.grad_fn._saved_other), m.grad_fn._saved_self is None]
    r["is_leaf"] = [x.is_leaf, m.is_leaf, x.grad_fn is None, m.requires_grad]
    r["isinstance_node"] = isinstance(m.grad_fn, torch.autograd.graph.Node)

    # --- grad modes ---------------------------------------------------------------------------
    with torch.no_grad():
        a = x * 2
        with torch.enable_grad():
            b = x * 2
    with torch.set_grad_enabled(False):
        c = x * 2
    with torch.inference_mode():
        e = x * 2
    r["modes"] = [a.requires_grad, b.requires_grad, c.requires_grad, e.requires_grad,
                  x.detach().requires_grad, torch.is_grad_enabled()]

    # --- double backward ------------------------------------------------------------------
    x = leaf(0.5, -1.0, 2.0)
    g, = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    g2, = torch.autograd.grad(g.sum(), x)
    r["double_backward"] = _vals(g) + _vals(g2)
    x = leaf(0.3, 0.7)
    y = torch.tanh(x) * x.exp()
    g, = torch.autograd.grad(y.sum(), x, create_graph=True)
    gg, = torch.autograd.grad((g * g).sum(), x)
    r["double_backward_tanh"] = _vals(gg)

    # --- custom Function ------------------------------------------------------------------
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp, k):
            ctx.save_for_backward(inp)
            ctx.k = k
            return inp ** 3 * k

        @staticmethod
        def backward(ctx, g):
            inp, = ctx.saved_tensors
            return g * 3 * inp ** 2 * ctx.k, None

    x = leaf(1.0, 2.0)
    y = Cube.apply(x, 2.0)
    y.sum().backward()
    r["function"] = [_vals(x.grad), type(y.grad_fn).__name__,
                     [None if n is None else n.name() for n, _ in y.grad_fn.next_functions]]

    class Setup(torch.autograd.Function):
        @staticmethod
        def forward(inp, other):
            return inp * other, inp + other

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.mark_non_differentiable(output[1])
            ctx.flags = list(ctx.needs_input_grad)

        @staticmethod
        def backward(ctx, g, g2):
            inp, other = ctx.saved_tensors
            return g * other, g * inp

    x, w = leaf(1.0, 2.0), const([3.0, 4.0])
    p, q = Setup.apply(x, w)
    p.sum().backward()
    r["setup_context"] = [_vals(x.grad), p.requires_grad, q.requires_grad,
                          p.grad_fn.flags]

    class Dirty(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            inp.mul_(2)
            ctx.mark_dirty(inp)
            return inp

        @staticmethod
        def backward(ctx, g):
            return g * 2

    x = leaf(1.0, 2.0)
    y = x * 1
    z = Dirty.apply(y)
    (z * z).sum().backward()
    r["mark_dirty"] = [_vals(x.grad), z is y, type(y.grad_fn).__name__]
    r["mark_dirty_leaf"] = _err(lambda: Dirty.apply(leaf(1.0)))

    class NoMat(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            ctx.set_materialize_grads(False)
            return inp * 1, inp * 2

        @staticmethod
        def backward(ctx, g1, g2):
            return g1 if g2 is None else g1 + g2 if g1 is not None else g2

    x = leaf(1.0, 2.0)
    a, b = NoMat.apply(x)
    b.sum().backward()
    r["materialize"] = _vals(x.grad)

    class Once(torch.autograd.Function):
        @staticmethod
        def forward(ctx, inp):
            ctx.save_for_backward(inp)
            return inp.exp()

        @staticmethod
        @torch.autograd.function.once_differentiable
        def backward(ctx, g):
            inp, = ctx.saved_tensors
            return g * inp.exp()

    x = leaf(0.5, 1.0)
    g, = torch.autograd.grad(Once.apply(x).sum(), x, create_graph=True)
    r["once_differentiable"] = [_vals(g), _err(lambda: g.sum().backward())]

    # --- inputs=, views + in-place ----------------------------------------------------------
    x, w = leaf(1.0, 2.0), leaf(3.0, 4.0)
    (x * w).sum().backward(inputs=[w])
    r["backward_inputs"] = [x.grad is None, _vals(w.grad)]
    x = leaf(1.0, 2.0, 3.0, 4.0)
    buf = torch.zeros(2, 4, dtype=d)
    buf[0] = x * 2
    buf[1, 1:3] = x[:2] ** 2
    buf.sum().backward()
    r["setitem"] = [_vals(x.grad), type(buf.grad_fn).__name__]
    return r


if __name__ == "__main__":
    main(probes)
