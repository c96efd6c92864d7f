"""torch.func.functionalize programs run identically on upstream torch and on ours (each in its
own process): make_fx graphs of functionalize(f) as generated code, in both modes ("mutations":
views reapplied; "mutations_and_views": view_copy variants), and eager results with the inputs
as the program left them. Only torch's public API is used.

``python functionalize_behaviour.py`` prints one JSON object: case name -> result.
"""

from __future__ import annotations

import numpy as np

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "harness"))
from prelude import main, run_cases, vals as _vals  # noqa: E402


def programs(torch):
    def clone_then_add(a):
        b = a.clone()
        b.add_(1)
        return b * 2

    def input_mutated(a):
        a.mul_(2)
        return a + 1

    def row_of_a_copy(a):
        b = a.clone()
        b[0].add_(1)
        return b

    def transposed_view(a):
        b = a.clone()
        b.t().mul_(2)
        return b

    def row_of_the_input(a):
        a[1].zero_()
        return a.sum()

    def flat_view_of_the_input(a):
        b = a.view(-1)
        b.add_(1)
        return a

    def column_then_read(a):
        b = a.clone()
        v = b[:, 1]
        v.mul_(3)
        return v + b.sum()

    def nested_views(a):
        b = a.clone()
        b.transpose(0, 1)[1:].unsqueeze(0).sub_(a.t()[1:])
        return b.exp()

    def setitem_number(a):
        b = torch.zeros(3, 2, dtype=a.dtype)
        b.copy_(a.t())
        b[0, 0] = 5.0
        return b

    return {k: v for k, v in locals().items() if callable(v)}


def cases(torch):
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.func import functionalize

    def const():
        v = np.linspace(-1.0, 1.0, 6) + 0.37 * np.sin(1.7 * np.arange(6) + 0.3)
        return torch.from_numpy(v.reshape(2, 3))

    out = {}
    for name, f in programs(torch).items():
        for remove in ("mutations", "mutations_and_views"):
            def graph(f=f, remove=remove):
                return make_fx(functionalize(f, remove=remove))(const()).code
            out[f"{name}__{remove}"] = graph

        def eager(f=f):
            a = const()
            r = functionalize(f)(a)
            return [_vals(r), _vals(a)]
        out[f"{name}__eager"] = eager
    from torch.func import grad, vmap

    def composed(a):
        b = a.clone()
        b[0].mul_(2)
        return (b * a).sum()

    def with_other_transforms():
        x = const()
        batch = torch.stack([x, x * 2])
        return [_vals(grad(functionalize(composed))(x)), _vals(functionalize(grad(composed))(x)),
                _vals(vmap(functionalize(composed))(batch))]

    def backward_through_functionalize():
        x = const().requires_grad_()
        functionalize(composed)(x).backward()
        return _vals(x.grad)

    out["with_other_transforms"] = with_other_transforms
    out["backward_through_functionalize"] = backward_through_functionalize
    return out


def probes(torch):
    return run_cases(cases(torch))


if __name__ == "__main__":
    main(probes, quiet=True)
