"""multilabel_margin_loss (forward, is_target, gradient) and nn.Bilinear's gradient (the
_trilinear backward) against upstream torch 2.13.0 in a separate process, judged by the kernel
golden harness (tolerances derived from upstream's own float32-vs-float64 error)."""

from __future__ import annotations

import textwrap

from kernel_golden import golden_suite

CASES: list = []


def case(name, family, expr, setup="", *flags):
    CASES.append((name, family, textwrap.dedent(setup), expr, list(flags)))


TARGET = "t = mk.tensor([[3, 0, -1, 1, 2], [1, 4, 4, 2, 0], [-1, 0, 0, 0, 0], [0, 1, 2, 3, 4]])\n"
for red in ("mean", "sum", "none"):
    for dt in ("float32", "float64"):
        case(f"mlml_{red}_{dt}", "mlml",
             f"grads(lambda x: F.multilabel_margin_loss(x, t, reduction='{red}'), x)",
             f"x = mk.randn(4, 5, dtype='{dt}').requires_grad_()\n" + TARGET)
case("mlml_forward_is_target", "mlml", "T.ops.aten.multilabel_margin_loss_forward(x, t, 1)",
     "x = mk.randn(4, 5)\n" + TARGET)
case("mlml_1d_none", "mlml", "grads(lambda x: F.multilabel_margin_loss(x, t, reduction='none'), x)",
     "x = mk.randn(6).requires_grad_(); t = mk.tensor([5, 2, -1, 0, 0, 0])")
case("mlml_0d", "mlml", "grads(lambda x: F.multilabel_margin_loss(x, t), x)",
     "x = mk.randn(1)[0].requires_grad_(); t = mk.tensor(0)")
case("mlml_wide_margins", "mlml", "grads(lambda x: F.multilabel_margin_loss(x * 3, t), x)",
     "x = mk.randn(8, 7).requires_grad_(); t = mk.randint(-1, 7, (8, 7))")
case("mlml_module", "mlml", "grads(lambda x: T.nn.MultiLabelMarginLoss()(x, t), x)",
     "x = mk.randn(4, 5).requires_grad_()\n" + TARGET)
case("mlml_out_of_range", "mlml", "F.multilabel_margin_loss(x, t)",
     "x = mk.randn(2, 3); t = mk.tensor([[0, 3, -1], [1, -1, 0]])")
case("mlml_bad_target_size", "mlml", "F.multilabel_margin_loss(x, t)",
     "x = mk.randn(2, 3); t = mk.tensor([[0, 1], [1, -1]])")
case("mlml_int_input", "mlml", "F.multilabel_margin_loss(x, t)",
     "x = mk.randint(0, 3, (2, 3)); t = mk.tensor([[0, 1, -1], [1, -1, 0]])")

case("bilinear_grads", "bilinear",
     "grads(lambda a, b, *ps: m(a, b), a, b, *m.parameters())",
     "T.manual_seed(0); m = T.nn.Bilinear(3, 4, 5).to(mk.dt('float32'))\n"
     "a = mk.randn(6, 3).requires_grad_(); b = mk.randn(6, 4).requires_grad_()")
case("bilinear_no_bias_batched", "bilinear",
     "grads(lambda a, b, w: F.bilinear(a, b, w), a, b, w)",
     "a = mk.randn(2, 3, 4).requires_grad_(); b = mk.randn(2, 3, 2).requires_grad_()\n"
     "w = mk.randn(5, 4, 2).requires_grad_()")
case("trilinear_op_grads", "bilinear",
     "grads(lambda a, w, b: T._trilinear(a, w, b, [1, 3], [0], [1, 2], [2, 3]), a, w, b)",
     "a = mk.randn(4, 3).requires_grad_(); w = mk.randn(5, 3, 2).requires_grad_()\n"
     "b = mk.randn(4, 2).requires_grad_()")
case("bilinear_double_backward", "bilinear",
     "T.autograd.grad(T.autograd.grad(F.bilinear(a, b, w).pow(2).sum(), w, create_graph=True)[0]"
     ".sum(), [a, b])",
     "a = mk.randn(4, 3).requires_grad_(); b = mk.randn(4, 2).requires_grad_()\n"
     "w = mk.randn(5, 3, 2).requires_grad_()")

_G, golden, test_agrees_with_upstream = golden_suite(CASES, "losses_golden")
