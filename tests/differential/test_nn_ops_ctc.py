"""ctc_loss (forward and gradient; padded and concatenated targets, int[] and tensor lengths,
every reduction, empty targets, impossible alignments with and without zero_infinity, unbatched
input, bad lengths) against upstream torch 2.13.0 in a separate process, judged by the kernel
golden harness (tolerances derived from upstream's own float32-vs-float64 error)."""

from __future__ import annotations

import textwrap

from kernel_golden import golden_suite

CASES: list = []


def case(name, expr, setup="", *flags):
    CASES.append((name, "ctc", textwrap.dedent(setup), expr, list(flags)))


LP = "lp = mk.randn(12, 3, 6).log_softmax(2).detach().requires_grad_()\n"
PADDED = "tg = mk.tensor([[1, 2, 2, 3], [4, 1, 0, 0], [5, 5, 5, 1]])\n"
for red in ("none", "mean", "sum"):
    case(f"padded_{red}", f"grads(lambda lp: F.ctc_loss(lp, tg, [12, 9, 12], [4, 2, 3], "
         f"reduction='{red}'), lp)", LP + PADDED)
case("concatenated_targets", "grads(lambda lp: F.ctc_loss(lp, tg, [12, 12, 10], [2, 3, 1]), lp)",
     LP + "tg = mk.tensor([1, 2, 3, 3, 3, 5])")
case("tensor_lengths", "grads(lambda lp: F.ctc_loss(lp, tg, il, tl, blank=5), lp)",
     LP + PADDED.replace("5", "0") + "il = mk.tensor([12, 11, 12]); tl = mk.tensor([4, 2, 3])")
case("empty_target", "grads(lambda lp: F.ctc_loss(lp, tg, [12, 12, 7], [4, 0, 4], "
     "reduction='none'), lp)", LP + PADDED)
case("impossible_alignment", "grads(lambda lp: F.ctc_loss(lp, tg, [3, 12, 12], [4, 2, 3], "
     "reduction='sum'), lp)", LP + PADDED)
case("impossible_zero_infinity", "grads(lambda lp: F.ctc_loss(lp, tg, [3, 12, 12], [4, 2, 3], "
     "reduction='mean', zero_infinity=True), lp)", LP + PADDED)
case("unbatched", "grads(lambda lp: F.ctc_loss(lp, tg, [10], [3], reduction='none'), lp)",
     "lp = mk.randn(10, 5).log_softmax(1).detach().requires_grad_(); tg = mk.tensor([1, 1, 4])")
case("module", "grads(lambda lp: T.nn.CTCLoss(blank=1)(lp, tg, [12, 12, 12], [4, 2, 3]), lp)",
     LP + PADDED.replace("1", "0"))
case("input_length_too_long", "F.ctc_loss(lp, tg, [13, 12, 12], [4, 2, 3])", LP + PADDED)
case("blank_out_of_range", "F.ctc_loss(lp, tg, [12, 12, 12], [4, 2, 3], blank=6)", LP + PADDED)
case("float_lengths", "F.ctc_loss(lp, tg, il, tl)",
     LP + PADDED + "il = mk.tensor([12., 12., 12.]); tl = mk.tensor([4, 2, 3])")

_G, golden, test_agrees_with_upstream = golden_suite(CASES, "ctc_golden")
