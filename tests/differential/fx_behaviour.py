"""torch.fx and make_fx programs run identically on upstream torch and on ours (each in its own
process): traced graphs as text (generated code, node lists), results as float64 lists, errors as
"Type: message". Only torch's public API is used.

``python fx_behaviour.py`` prints one JSON object: case name -> result.
"""

from __future__ import annotations

import copy
import pickle
import sys
from pathlib import Path

import numpy as np

# run as a file under upstream, the script finds the shared behaviour helpers in harness/
sys.path.insert(0, str(Path(__file__).resolve().parent / "harness"))
from prelude import err as _err, main, run_cases, vals as _vals  # noqa: E402


def _target(t):
    # callables by qualified name (their reprs carry addresses and builtin-vs-function spelling)
    if callable(t):
        from torch.fx.node import _get_qualified_name

        return _get_qualified_name(t)
    return str(t)


def _canonical(gm):
    """Generated code with nodes renamed in order (v0, v1, ...). A symbolic trace records size
    computations (upstream's contiguity checks) that dead-code elimination removes; only the
    numbering of the surviving nodes' names remembers them."""
    import re

    code = gm.code
    for i, n in enumerate(gm.graph.nodes):
        code = re.sub(rf"(?<![\w.]){re.escape(n.name)}\b", f"v{i}", code)
    return code


def _nodes(graph):
    return [[n.op, n.name, _target(n.target), str(n.args), str(n.kwargs), len(n.users)]
            for n in graph.nodes]


def cases(torch):
    import torch.fx as fx
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.fx.passes.shape_prop import ShapeProp

    F = torch.nn.functional
    d = torch.float64

    def const(shape, start=-1.0, stop=1.0):
        # irregular values: a symmetric ramp would normalise to exact zeros, where relu's
        # gradient is decided by the last bit
        n = int(np.prod(shape))
        v = np.linspace(start, stop, n) + 0.37 * np.sin(1.7 * np.arange(n) + 0.3)
        return torch.from_numpy(v.reshape(shape).astype(np.float64))

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 3).double()
            self.norm = torch.nn.LayerNorm(3).double()
            with torch.no_grad():
                self.lin.weight.copy_(const((3, 4), -0.5, 0.7))
                self.lin.bias.copy_(const((3,), 0.1, 0.3))
            self.register_buffer("scale", const((3,), 1.0, 2.0))

        def forward(self, x):
            y = self.norm(self.lin(x)).relu() * self.scale
            return torch.cat([y, x[:, :3]], dim=1).sum(-1) + 1

    x = const((2, 4))
    r = {}

    def traced_block():
        return fx.symbolic_trace(Block())

    def symbolic_trace_code():
        return traced_block().code

    def symbolic_trace_nodes():
        return _nodes(traced_block().graph)

    def symbolic_trace_graph_str():
        return str(traced_block().graph)

    def symbolic_trace_result():
        m = Block()
        gm = fx.symbolic_trace(m)
        return [_vals(gm(x)), _vals(m(x))]

    def function_trace():
        def f(a, b):
            return torch.relu(a @ b).sum(0) * 2 + a.sin().mean() - F.gelu(b).max()
        gm = fx.symbolic_trace(f)
        return [gm.code, _vals(gm(const((3, 3)), const((3, 3), 0.5, -0.2)))]

    def concrete_args():
        def f(a, flag):
            return a * 2 if flag else a - 1
        gm = fx.symbolic_trace(f, concrete_args={"flag": False})
        return [gm.code, _vals(gm(const((2,)), False))]

    def control_flow_error():
        def f(a):
            if a.sum() > 0:
                return a
            return -a
        return _err(lambda: fx.symbolic_trace(f))

    def graph_edit_recompile():
        gm = traced_block()
        for n in gm.graph.nodes:
            if n.op == "call_method" and n.target == "relu":
                with gm.graph.inserting_after(n):
                    new = gm.graph.call_function(torch.sigmoid, (n,))
                n.replace_all_uses_with(new)
                new.args = (n,)
        gm.graph.lint()
        gm.recompile()
        return [gm.code, _vals(gm(x))]

    def erase_and_dce():
        def f(a):
            unused = a.cos()  # noqa: F841
            b = a + 1
            return b * 2
        gm = fx.symbolic_trace(f)
        before = len(list(gm.graph.nodes))
        changed = gm.graph.eliminate_dead_code()
        gm.recompile()
        return [before, changed, len(list(gm.graph.nodes)), gm.code]

    def node_order_and_moves():
        g = fx.Graph()
        a = g.placeholder("a")
        b = g.call_function(torch.neg, (a,))
        c = g.call_function(torch.abs, (a,))
        g.output((b, c))
        nodes = list(g.nodes)
        order = [[p < q, p > q, p <= q, p >= q, q <= q] for p, q in zip(nodes, nodes[1:])]
        b.prepend(c)  # move c before b
        moved = [[n.name, list(n._sort_key)] for n in g.nodes]
        rev = [n.name for n in reversed(g.nodes)]
        g.erase_node(g.call_function(torch.sin, (a,)))
        return [order, moved, rev, [n.name for n in g.nodes], c < b,
                fx.GraphModule(torch.nn.Module(), g).code]

    def prepend_new_node():
        g = fx.Graph()
        a = g.placeholder("a")
        b = g.call_function(torch.neg, (a,))
        g.output(b)
        with g.inserting_before(b):
            c = g.call_function(torch.abs, (a,))
        b.args = (c,)
        keys = [n._sort_key for n in g.nodes]
        return [[n.name for n in g.nodes], [list(k) for k in keys], [c < b, a < c],
                fx.GraphModule(torch.nn.Module(), g).code]

    def map_arg_structures():
        from collections import namedtuple

        from torch.fx.node import map_aggregate, map_arg

        P = namedtuple("P", "u v")
        g = fx.Graph()
        a = g.placeholder("a")
        arg = (a, [a, 1, {"k": a, "j": slice(a, 2, None)}], P(a, 3), ())
        seen = []
        out = map_arg(arg, lambda n: seen.append(n.name) or "N")
        agg = map_aggregate(arg, lambda v: type(v).__name__)
        return [repr(out), type(out[1]).__name__, type(out[1][2]).__name__, type(out[2]).__name__,
                seen, repr(agg)]

    def users_and_inputs():
        g = fx.Graph()
        a = g.placeholder("a")
        b = g.placeholder("b")
        c = g.call_function(torch.add, (a, [b, a]), {"alpha": b})
        d2 = g.call_function(torch.mul, (c, c))
        g.output(d2)
        before = [[n.name, [u.name for u in n.users], [i.name for i in n.all_input_nodes]]
                  for n in g.nodes]
        c.replace_input_with(a, b)
        after = [[n.name, [u.name for u in n.users], [i.name for i in n.all_input_nodes]]
                 for n in g.nodes]
        return [before, after, repr(c.args), repr(c.kwargs)]

    def pickle_round_trip():
        gm = traced_block()
        gm2 = pickle.loads(pickle.dumps(gm))
        return [gm2.code == gm.code, _nodes(gm2.graph), _vals(gm2(x))]

    def deepcopy_graph_module():
        gm = traced_block()
        gm2 = copy.deepcopy(gm)
        return [gm2.code == gm.code, _vals(gm2(x))]

    def interpreter_run():
        gm = traced_block()
        return _vals(fx.Interpreter(gm).run(x))

    def interpreter_backward():
        m = Block()
        gm = fx.symbolic_trace(m)
        fx.Interpreter(gm).run(x).pow(2).sum().backward()
        return [_vals(p.grad) for p in m.parameters()]

    def interpreter_env_trace():
        gm = traced_block()
        seen = []

        class Spy(fx.Interpreter):
            def run_node(self, n):
                out = super().run_node(n)
                seen.append([n.name, list(out.shape) if isinstance(out, torch.Tensor) else None])
                return out

        Spy(gm).run(x)
        return seen

    def transformer_swap():
        gm = traced_block()

        class Swap(fx.Transformer):
            def call_method(self, target, args, kwargs):
                if target == "relu":
                    return self.tracer.create_proxy("call_function", torch.tanh, args, kwargs)
                return super().call_method(target, args, kwargs)

        t = Swap(gm).transform()
        return [t.code, _vals(t(x))]

    def shape_prop():
        gm = traced_block()
        ShapeProp(gm).propagate(x)
        out = []
        for n in gm.graph.nodes:
            tm = n.meta.get("tensor_meta")
            out.append([n.name, None if tm is None else
                        [list(tm.shape), str(tm.dtype), list(tm.stride), tm.requires_grad]])
        return out

    def subgraph_rewrite():
        from torch.fx import subgraph_rewriter

        def f(a, b):
            return torch.relu(a + b) * torch.relu(a - b)

        def pattern(p, q):
            return torch.relu(p + q)

        def repl(p, q):
            return torch.sigmoid(p) * q

        gm = fx.symbolic_trace(f)
        matches = subgraph_rewriter.replace_pattern(gm, pattern, repl)
        return [len(matches), gm.code, _vals(gm(const((3,)), const((3,), 0.3, 0.9)))]

    def custom_tracer_leaf():
        class Leafy(fx.Tracer):
            def is_leaf_module(self, m, qualname):
                return isinstance(m, torch.nn.LayerNorm) or super().is_leaf_module(m, qualname)

        m = Block()
        g = Leafy().trace(m)
        return fx.GraphModule(m, g).code

    def wrapped_function():
        gm = fx.symbolic_trace(_uses_wrapped)
        # the generated code names the defining module (__main__ when run as a script)
        return [gm.code.replace(_uses_wrapped.__module__, "MODULE"), _vals(gm(const((3,))))]

    def make_fx_real():
        def f(a, b):
            return torch.relu(a @ b).sum(0) * 2 + a.sin().mean()
        g = make_fx(f)(const((3, 3)), const((3, 3), 0.4, -0.6))
        return [g.code, _vals(g(const((3, 3)), const((3, 3), 0.4, -0.6)))]

    def make_fx_module_real():
        m = Block()
        g = make_fx(lambda t: m(t))(x)
        return [g.code, _vals(g(x))]

    def make_fx_fake():
        def f(a):
            return (a.t() @ a).softmax(-1)[1:].clone().view(-1)
        g = make_fx(f, tracing_mode="fake")(const((4, 3)))
        return [g.code, _vals(g(const((4, 3))))]

    def make_fx_symbolic():
        def f(a):
            return a.reshape(-1).cumsum(0) * a.shape[0]
        g = make_fx(f, tracing_mode="symbolic")(const((2, 3)))
        # the graph is shape-generic: run it on another shape
        return [_canonical(g), _vals(g(const((3, 4))))]

    def make_fx_symbolic_programs():
        programs = [
            lambda a: a.reshape(3, -1).sum(0),
            lambda a: a.t().reshape(-1),
            lambda a: a[:, :2].reshape(-1),
            lambda a: a[: a.shape[0] - 1] * 2,
            lambda a: a.new_zeros(a.shape) + a.numel(),
            lambda a: a.view(a.shape[1], a.shape[0]).sum(1),
            lambda a: torch.cat([a, a * 2], dim=0).mean(0),
            lambda a: a.expand(2, *a.shape).sum(0) / a.shape[1],
            lambda a: F.softmax(a @ a.t(), -1) + F.gelu(a).sum(),
        ]
        out = []
        for f in programs:
            g = make_fx(f, tracing_mode="symbolic")(const((2, 3)))
            out.append([_canonical(g), _vals(g(const((4, 3), 0.5, -0.9)))])
        return out

    def make_fx_inplace_and_views():
        def f(a):
            b = a.clone()
            b[0].add_(1)
            b.transpose(0, 1).mul_(2)
            return b
        g = make_fx(f)(const((2, 2)))
        return [g.code, _vals(g(const((2, 2))))]

    def make_fx_dropout_decomposes():
        # upstream's Python dispatcher runs dropout's py_impl decomposition before the trace
        def f(a):
            return F.dropout(a, 0.5, training=False) + F.dropout(a, 0.0, training=True)
        return make_fx(f)(const((3,))).code

    def make_fx_backward():
        def f(a):
            a = a.detach().requires_grad_()
            (a.exp() * a).sum().backward()
            return a.grad
        g = make_fx(f)(const((3,)))
        return [g.code, _vals(g(const((3,))))]

    def make_fx_autograd_grad():
        # the backward graph, saved outputs' detaches included, in real and symbolic modes
        def f(t):
            return (t.sin() * t).relu().pow(2)

        out = []
        for mode in ("real", "symbolic"):
            g = make_fx(lambda t: torch.autograd.grad(f(t).sum(), t), tracing_mode=mode)(
                const((3,)).requires_grad_())
            n = 3 if mode == "real" else 5  # a symbolic graph runs on another size too
            out.append([_canonical(g), _vals(g(const((n,), 0.3, -0.8))[0])])
        return out

    def accumulate_grad_takes_fresh_gradient():
        # upstream's AccumulateGrad takes a first gradient nothing else holds (a view of the
        # incoming gradient included) and copies one a caller or hook still holds
        out = []
        for how in ("view", "mul", "add", "hook", "custom"):
            leaf = torch.ones(2, 3, dtype=d, requires_grad=True)
            g = const((6,)) if how == "view" else const((2, 3))
            kept = []
            if how == "view":
                leaf.view(-1).backward(g)
            elif how == "mul":
                (leaf * 2).backward(g)
            elif how == "add":
                (leaf + 1).backward(g)
            elif how == "hook":
                leaf.register_hook(kept.append)
                (leaf * 2).backward(g)
            else:
                class Twice(torch.autograd.Function):
                    @staticmethod
                    def forward(ctx, t):
                        return t * 2

                    @staticmethod
                    def backward(ctx, grad):
                        kept.append(grad * 2)
                        return kept[-1]
                Twice.apply(leaf).backward(g)
            held = g if how in ("view", "add") else kept[0] if kept else None
            out.append([how, None if held is None else leaf.grad.data_ptr() == held.data_ptr(),
                        _vals(leaf.grad)])
        return out

    local = dict(locals())
    return {k: v for k, v in local.items()
            if callable(v) and not k.startswith("_") and k not in ("const", "traced_block",
                                                                   "Block", "make_fx",
                                                                   "ShapeProp")}


def _uses_wrapped(a):
    return _wrapped_len(a) * a


def _wrapped_len(a):
    return a.shape[0] + 1


# torch.fx.wrap must be called at a module's top level (it patches this module's globals)
import torch.fx as _fx  # noqa: E402

_fx.wrap("_wrapped_len")


def probes(torch):
    return run_cases(cases(torch))


if __name__ == "__main__":
    main(probes, quiet=True)
