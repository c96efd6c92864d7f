"""torch.func programs run identically on upstream torch and on ours (each in its own process):
vmap (rules, fallback, nesting, in_dims/out_dims, chunk_size, randomness), grad transforms
(grad, grad_and_value, vjp, jacrev, jacrev of jacrev), per-sample gradients of an MLP and a CNN,
functional_call and stack_module_state ensembling, and the errors upstream raises. Values are
float64 lists, errors "Type: message". Only torch's public API is used.

``python func_behaviour.py`` prints one JSON object: case name -> result.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harness"))
from prelude import err as _err, main, run_cases, vals as _vals  # noqa: E402


def _tree_vals(tree):
    if isinstance(tree, dict):
        return [[k, _tree_vals(v)] for k, v in sorted(tree.items())]
    if isinstance(tree, (list, tuple)):
        return [_tree_vals(v) for v in tree]
    if hasattr(tree, "shape"):
        return [list(tree.shape), _vals(tree)]
    return tree


def cases(torch):
    from torch.func import (functional_call, grad, grad_and_value, jacrev, stack_module_state,
                            vjp, vmap)

    F = torch.nn.functional
    d = torch.float64

    def const(*shape, start=-1.0, stop=1.0, phase=0.3):
        n = int(np.prod(shape))
        v = np.linspace(start, stop, n) + 0.37 * np.sin(1.7 * np.arange(n) + phase)
        return torch.from_numpy(v.reshape(shape).astype(np.float64))

    x = const(4, 3, 5)
    y = const(4, 5, phase=1.1)
    w = const(5, 2, phase=2.0)

    def mlp():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(5, 7), torch.nn.Tanh(),
                                   torch.nn.Linear(7, 3)).double()

    def cnn():
        torch.manual_seed(1)
        return torch.nn.Sequential(torch.nn.Conv2d(1, 3, 3, padding=1), torch.nn.ReLU(),
                                   torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                   torch.nn.Linear(3 * 3 * 3, 4)).double()

    def per_sample(model, xs, ys):
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xb, yb):
            out = functional_call(model, p, (xb.unsqueeze(0),))
            return F.cross_entropy(out, yb.unsqueeze(0))

        batched = vmap(grad(loss), in_dims=(None, 0, 0))(params, xs, ys)
        looped = [grad(loss)(params, xs[i], ys[i]) for i in range(xs.shape[0])]
        # per-sample gradients also equal a loop of plain autograd over single samples
        plain = []
        for i in range(xs.shape[0]):
            model.zero_grad()
            F.cross_entropy(model(xs[i:i + 1]), ys[i:i + 1]).backward()
            plain.append({k: v.grad.clone() for k, v in model.named_parameters()})
        agree = all(float((batched[k][i] - looped[i][k]).abs().max()) <= 1e-12 and
                    float((batched[k][i] - plain[i][k]).abs().max()) <= 1e-12
                    for i in range(xs.shape[0]) for k in batched)
        return [agree, _tree_vals(batched)]

    def ensemble():
        torch.manual_seed(2)
        models = [torch.nn.Linear(5, 3).double() for _ in range(3)]
        params, buffers = stack_module_state(models)
        base = torch.nn.Linear(5, 3).double().to("meta")

        def call(p, b, xb):
            return functional_call(base, (p, b), (xb,))

        out = vmap(call, in_dims=(0, 0, None))(params, buffers, y)
        loop = torch.stack([m(y) for m in models])
        return [float((out - loop).abs().max()) <= 1e-12, _tree_vals(params), _vals(out)]

    def opacus_functorch():
        """opacus' per-sample gradients through torch.func (force_functorch: every layer's
        gradient sample is vmap(grad) of the layer), and its sum against the plain gradient."""
        from opacus.grad_sample import GradSampleModule

        torch.manual_seed(3)
        model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.ReLU(),
                                    torch.nn.Flatten(), torch.nn.Linear(2 * 4 * 4, 3)).double()
        gs = GradSampleModule(model, loss_reduction="sum", force_functorch=True)
        xs = const(4, 1, 6, 6, phase=0.4)
        F.cross_entropy(gs(xs), torch.tensor([0, 1, 2, 1]), reduction="sum").backward()
        summed = all(float((p.grad_sample.sum(0) - p.grad).abs().max()) <= 1e-12
                     for p in gs.parameters())
        return [summed] + [[n, _vals(p.grad_sample)] for n, p in gs.named_parameters()]

    def rand_case(randomness, fn):
        def run():
            torch.manual_seed(5)
            return _vals(vmap(fn, randomness=randomness)(torch.zeros(3, 4, dtype=d)))
        return run

    def inplace_unbatched():
        base = torch.zeros(5, dtype=d)

        def f(v):
            return base.add_(v)

        return vmap(f)(y)

    def diag_embed(v):
        out = torch.zeros(v.shape[0], v.shape[0], dtype=d)
        out.diagonal().copy_(v)
        return out

    def diag_embed_new(v):
        out = v.new_zeros(v.shape[0], v.shape[0])
        out.diagonal().copy_(v)
        return out

    c = {
        # --- vmap: batch rules --------------------------------------------------------------
        "vmap_unary": lambda: _vals(vmap(torch.sin)(x)),
        "vmap_binary_broadcast": lambda: _vals(vmap(lambda a: a * y[0] + 1.5)(x)),
        "vmap_binary_both": lambda: _vals(vmap(torch.mul, in_dims=(1, 0))(x, y[:3])),
        "vmap_scalar_promotion": lambda: [str(r.dtype), _vals(r)] if (r := vmap(
            lambda a: a * torch.ones(3, dtype=torch.float32))(const(4))) is not None else None,
        "vmap_sum_dim": lambda: _vals(vmap(lambda a: a.sum(1))(x)),
        "vmap_sum_all": lambda: _vals(vmap(torch.sum)(x)),
        "vmap_mean_keepdim": lambda: _vals(vmap(lambda a: a.mean(-1, keepdim=True))(x)),
        "vmap_var": lambda: _vals(vmap(lambda a: a.var(0))(x)),
        "vmap_max_dim": lambda: _tree_vals(list(vmap(lambda a: a.max(1))(x))),
        "vmap_argmax": lambda: _vals(vmap(lambda a: a.argmax(-1))(x)),
        "vmap_softmax": lambda: _vals(vmap(lambda a: a.softmax(-1))(x)),
        "vmap_log_softmax_dim0": lambda: _vals(vmap(lambda a: F.log_softmax(a, 0))(x)),
        "vmap_cumsum": lambda: _vals(vmap(lambda a: a.cumsum(0))(x)),
        "vmap_mm_right": lambda: _vals(vmap(lambda a: a @ w)(x)),
        "vmap_mm_left": lambda: _vals(vmap(lambda b: x[0] @ b, in_dims=1)(const(5, 4, 2))),
        "vmap_mm_both": lambda: _vals(vmap(torch.mm)(x, const(4, 5, 2))),
        "vmap_bmm": lambda: _vals(vmap(torch.bmm)(const(2, 3, 2, 4), const(2, 3, 4, 2))),
        "vmap_mv": lambda: _vals(vmap(torch.mv, in_dims=(None, 0))(x[0], y)),
        "vmap_dot": lambda: _vals(vmap(torch.dot)(y, y.flip(0))),
        "vmap_linear": lambda: _vals(vmap(lambda a: F.linear(a, w.t(), w[0]))(x)),
        "err_linear_bias_size": lambda: _err(lambda: vmap(lambda a: F.linear(a, w.t(), w[:, 0]))(
            x)),
        "vmap_matmul_nd": lambda: _vals(vmap(torch.matmul)(const(2, 3, 4, 5), const(2, 5, 2))),
        "vmap_view_reshape": lambda: _vals(vmap(lambda a: a.reshape(5, 3).t().flatten())(x)),
        "vmap_view_in_dim0": lambda: _vals(vmap(lambda a: a.view(-1))(x)),
        "err_view_not_a_view": lambda: _err(lambda: vmap(lambda a: a.view(-1), in_dims=1)(x)),
        "vmap_permute_transpose": lambda: _vals(vmap(lambda a: a.unsqueeze(0).permute(2, 0, 1)
                                                     .transpose(0, 1))(x)),
        "vmap_expand": lambda: _vals(vmap(lambda a: a[0].expand(2, 3, 5))(x)),
        "vmap_squeeze_select_slice": lambda: _vals(vmap(lambda a: a[1:, 2].unsqueeze(1)
                                                        .squeeze(-1))(x)),
        "vmap_split_unbind": lambda: _tree_vals(vmap(lambda a: (a.split(2, 1)[1],
                                                                a.unbind(0)[2]))(x)),
        "vmap_cat_stack": lambda: _vals(vmap(lambda a, b: torch.cat([torch.stack([a[0], b]),
                                                                     a], 0))(x, y)),
        "vmap_cat_unbatched_part": lambda: _vals(vmap(lambda a: torch.cat([a, w.t()], 0))(x)),
        "vmap_index_select": lambda: _vals(vmap(lambda a: a.index_select(1, torch.tensor(
            [4, 0, 2])))(x)),
        "vmap_gather": lambda: _vals(vmap(lambda a: a.gather(1, torch.tensor(
            [[0, 1], [2, 3], [4, 4]])))(x)),
        "vmap_embedding": lambda: _vals(vmap(lambda i: F.embedding(i, w))(torch.tensor(
            [[0, 1], [4, 2], [3, 3]]))),
        "vmap_where_masked_fill": lambda: _vals(vmap(lambda a: torch.where(a > 0, a, -a)
                                                     .masked_fill(a < -0.5, 7.0))(x)),
        "vmap_conv2d_input": lambda: _vals(vmap(lambda a: F.conv2d(a, const(2, 1, 3, 3),
                                                                   const(2)))(const(3, 2, 1, 5, 5))),
        "vmap_conv2d_weight": lambda: _vals(vmap(lambda k: F.conv2d(const(2, 1, 5, 5), k))(
            const(3, 2, 1, 3, 3))),
        "vmap_conv2d_both": lambda: _vals(vmap(lambda a, k, b: F.conv2d(a, k, b, padding=1))(
            const(3, 2, 2, 4, 4), const(3, 3, 2, 3, 3), const(3, 3))),
        "vmap_layer_norm": lambda: _vals(vmap(lambda a: F.layer_norm(a, (5,), w[:, 0].repeat(3)[:5],
                                                                     None))(x)),
        "vmap_fallback_op": lambda: _vals(vmap(lambda a: torch.kron(a, a[:1, :2]))(x)),
        "vmap_nested": lambda: _vals(vmap(vmap(lambda a, b: (a * b).sum(), in_dims=(0, None)),
                                          in_dims=(0, None))(x, y[0])),
        "vmap_nested_in_dims": lambda: _vals(vmap(vmap(torch.mul, in_dims=(0, None)),
                                                  in_dims=(None, 0))(y[0], y)),
        "vmap_nested_outer": lambda: _vals(vmap(vmap(torch.outer, in_dims=(None, 0)),
                                                in_dims=(0, None))(y, x[0])),
        "vmap_out_dims": lambda: _tree_vals(vmap(lambda a: (a.sum(0), a * 2), out_dims=(0, 1))(x)),
        "vmap_chunk_size": lambda: _vals(vmap(lambda a: a.cumprod(0), chunk_size=3)(x)),
        "vmap_pytree_in": lambda: _vals(vmap(lambda t: t["a"] - t["b"][0])({"a": y, "b": [y * 3]})),
        "vmap_unbatched_output": lambda: _vals(vmap(lambda a: w)(x)),
        "vmap_inplace_batched": lambda: _vals(vmap(lambda a: a.clone().mul_(2).add_(y[0]))(
            x[:, 0])),
        "vmap_new_zeros_copy": lambda: _vals(vmap(diag_embed_new)(y)),
        "vmap_dropout_same": rand_case("same", lambda a: F.dropout(a + 1, 0.5)),
        "vmap_dropout_different": rand_case("different", lambda a: F.dropout(a + 1, 0.5)),
        "vmap_randn_different": rand_case("different", lambda a: a + torch.randn(4, dtype=d)),
        "vmap_randn_same": rand_case("same", lambda a: a + torch.randn(4, dtype=d)),
        "vmap_rand_like_different": rand_case("different", lambda a: torch.rand_like(a)),
        "vmap_batch_norm_batched_stats": lambda: (lambda m, v: [_vals(vmap(
            lambda a, mm, vv: F.batch_norm(a, mm, vv, training=True))(x, m, v)), _vals(m),
            _vals(v)])(torch.zeros(4, 5, dtype=d), torch.ones(4, 5, dtype=d)),
        "vmap_batch_norm_eval": lambda: _vals(vmap(lambda a: F.batch_norm(
            a, w[:, 0], w[:, 1].abs() + 1, training=False))(x)),
        "vmap_batch_norm_no_stats": lambda: _vals(vmap(lambda a: F.batch_norm(
            a, None, None, training=True))(x)),
        # --- errors ---------------------------------------------------------------------------
        "err_batch_norm_unbatched_stats": lambda: _err(lambda: vmap(lambda a: F.batch_norm(
            a, torch.zeros(5, dtype=d), torch.ones(5, dtype=d), training=True))(x)),
        "err_masked_select_batched_mask": lambda: _err(lambda: vmap(torch.masked_select)(
            x, x > 0)),
        "err_randomness_error": lambda: _err(lambda: vmap(lambda a: a + torch.rand(4))(
            torch.zeros(3, 4))),
        "err_randomness_bad": lambda: _err(lambda: vmap(torch.sin, randomness="sometimes")(x)),
        "err_same_batched_input": lambda: _err(lambda: vmap(lambda a: torch.bernoulli(a),
                                                            randomness="same")(
            torch.full((3, 4), 0.5))),
        "err_inplace_unbatched": lambda: _err(inplace_unbatched),
        "err_diag_embed_zeros": lambda: _err(lambda: vmap(diag_embed)(y)),
        "err_in_dims_mismatch": lambda: _err(lambda: vmap(torch.add)(x, y)),
        "err_in_dims_count": lambda: _err(lambda: vmap(torch.add, in_dims=(0,))(x, x)),
        "err_in_dim_range": lambda: _err(lambda: vmap(torch.sin, in_dims=3)(x)),
        "err_item": lambda: _err(lambda: vmap(lambda a: a.sum().item())(x)),
        "err_control_flow": lambda: _err(lambda: vmap(lambda a: a if a.sum() > 0 else -a)(x)),
        "err_no_tensor_inputs": lambda: _err(lambda: vmap(lambda a: a)(3.0)),
        # --- grad transforms ------------------------------------------------------------------
        "grad_simple": lambda: _vals(grad(lambda a: (a.sin() * a).sum())(y)),
        "grad_argnums": lambda: _tree_vals(grad(lambda a, b: (a @ b).pow(2).sum(),
                                                argnums=(0, 1))(y, w)),
        "grad_has_aux": lambda: _tree_vals(grad(lambda a: ((a ** 2).sum(), a.mean()),
                                                has_aux=True)(y)),
        "grad_and_value": lambda: _tree_vals(grad_and_value(lambda a: a.exp().sum())(y[0])),
        "grad_of_grad": lambda: _vals(grad(grad(lambda a: a.sin().sum() * 1.0 + (a ** 3).sum()
                                                if a.dim() == 0 else a))(torch.tensor(0.7, dtype=d))),
        "grad_closure_outer": lambda: _vals(grad(lambda a: grad(lambda b: (a * b).sum())(a).sum()
                                                 * a.sum())(y[0])),
        "grad_output_requires_no_grad": lambda: [(r := grad(lambda a: (a ** 2).sum())(y)).requires_grad,
                                                 r.grad_fn is None],
        "grad_through_outer_autograd": lambda: _vals(torch.autograd.grad(
            grad(lambda a: (a ** 3).sum())(yy := y[0].clone().requires_grad_()).sum(), yy)[0]),
        "grad_through_outer_autograd_exp": lambda: _vals(torch.autograd.grad(
            grad(lambda a: (a.exp() * a.sin()).sum())(yy := y[1].clone().requires_grad_()).sum(),
            yy)[0]),
        "vjp": lambda: _tree_vals((lambda o_fn: [o_fn[0], o_fn[1](torch.ones(3, 2, dtype=d))])(
            vjp(lambda a: a @ w, x[0]))),
        "jacrev": lambda: _vals(jacrev(lambda a: a.sin() * a.sum())(y[0])),
        "jacrev_argnums": lambda: _tree_vals(jacrev(lambda a, b: a @ b, argnums=(0, 1))(y[0], w)),
        "hessian_jacrev_jacrev": lambda: _vals(jacrev(jacrev(lambda a: (a.sin() * a).sum() +
                                                             (a[0] * a[1]) ** 2))(y[0])),
        "vmap_of_jacrev": lambda: _vals(vmap(jacrev(lambda a: a.sin() * a.sum()))(x[0])),
        "grad_of_vmap": lambda: _vals(grad(lambda a: vmap(lambda r: (r.exp() * r).sum())(a)
                                           .pow(2).sum())(x[0])),
        "jacrev_of_vmap": lambda: _vals(jacrev(vmap(lambda r: r.tanh() @ w))(x[0, :2])),
        "vmap_grad_grad": lambda: _vals(vmap(grad(grad(lambda a: a.sin() * a.exp())))(y[0])),
        "per_sample_mlp": lambda: per_sample(mlp(), const(6, 5), torch.tensor([0, 2, 1, 1, 0, 2])),
        "per_sample_cnn": lambda: per_sample(cnn(), const(5, 1, 6, 6, phase=0.9),
                                             torch.tensor([0, 3, 1, 2, 3])),
        "ensemble_stack_module_state": ensemble,
        "opacus_functorch_grad_sample": opacus_functorch,
        "functional_call": lambda: _vals(functional_call(mlp(), {"0.bias": torch.zeros(7, dtype=d)},
                                                         (y,))),
        # as_strided per element: relative to each element's own storage offset
        "vmap_as_strided_rows": lambda: _vals(vmap(lambda t: t.as_strided((2,), (1,), 1))(
            const(3, 8))),
        "vmap_as_strided_2d_default_offset": lambda: _vals(vmap(
            lambda t: t.view(2, 4).as_strided((4, 2), (1, 4)))(const(3, 8))),
        "vmap_as_strided_batch_not_outermost": lambda: _vals(vmap(
            lambda t: t.as_strided((2,), (1,)), in_dims=1)(const(3, 8))),
        "vmap_as_strided_nested": lambda: _vals(vmap(vmap(
            lambda t: t.as_strided((1,), (1,), 2)))(const(3, 2, 4))),
        "vmap_grad_as_strided": lambda: _vals(vmap(grad(
            lambda t: t.as_strided((2,), (3,), 1).pow(2).sum()))(const(3, 8))),
        "err_grad_nonscalar": lambda: _err(lambda: grad(lambda a: a * 2)(y)),
        "err_grad_has_aux_shape": lambda: _err(lambda: grad(lambda a: a.sum(), has_aux=True)(y)),
        "err_grad_int_input": lambda: _err(lambda: grad(lambda a: a.sum())(torch.arange(3))),
        "err_backward_inside": lambda: _err(lambda: grad(lambda a: (a.sum().backward(), a.sum())[1])(y)),
    }
    return c


def probes(torch):
    torch.set_default_dtype(torch.float64)
    try:
        return run_cases(cases(torch))
    finally:
        torch.set_default_dtype(torch.float32)


if __name__ == "__main__":
    main(probes, quiet=True)
