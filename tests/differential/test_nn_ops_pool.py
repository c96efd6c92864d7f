"""Fractional max pooling (2-d and 3-d: values, indices, gradients; the random samples drawn from
the bit-exact generator by upstream's own Python) and max_pool3d with indices against upstream
torch 2.13.0 in a separate process, judged by the kernel golden harness."""

from __future__ import annotations

import textwrap

from kernel_golden import golden_suite

CASES: list = []


def case(name, family, expr, setup="", *flags):
    # no float64 rerun: a float64 input draws other random samples (other windows), and the
    # selection itself is exact, so values and indices must be upstream's to the floor tolerance
    CASES.append((name, family, textwrap.dedent(setup), expr,
                  list(flags) + ([] if "exact" in flags else ["exact"])))


for dt in ("float32", "float64"):
    case(f"fmp2d_{dt}", "fmp",
         "grads(lambda x: F.fractional_max_pool2d(x, 3, output_size=(5, 4), return_indices=True), x)",
         f"x = mk.randn(2, 3, 11, 9, dtype='{dt}').requires_grad_()", "seed")
    case(f"fmp3d_{dt}", "fmp",
         "grads(lambda x: F.fractional_max_pool3d(x, (2, 3, 2), output_size=(3, 4, 5), "
         "return_indices=True), x)",
         f"x = mk.randn(2, 2, 7, 9, 8, dtype='{dt}').requires_grad_()", "seed")
case("fmp2d_ratio_unbatched", "fmp",
     "grads(lambda x: F.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5), return_indices=True),"
     " x)", "x = mk.randn(3, 10, 12).requires_grad_()", "seed")
# a single float ratio is upstream's TypeError (its len() is taken before it is paired)
case("fmp2d_float_ratio_refused", "fmp", "F.fractional_max_pool2d(x, 2, output_ratio=0.5)",
     "x = mk.randn(3, 10, 12)")
case("fmp3d_ratio_unbatched", "fmp",
     "grads(lambda x: F.fractional_max_pool3d(x, 2, output_ratio=(0.5, 0.6, 0.7), "
     "return_indices=True), x)", "x = mk.randn(2, 6, 8, 9).requires_grad_()", "seed")
case("fmp2d_given_samples", "fmp",
     "F.fractional_max_pool2d(x, 2, output_size=3, return_indices=True, _random_samples=u)",
     "x = mk.randn(1, 2, 7, 7); u = mk.tensor([[[0.0, 0.999], [0.5, 0.25]]])")
case("fmp3d_unbatched_oversized_samples", "fmp",
     "F.fractional_max_pool3d(x, 2, output_ratio=0.5, return_indices=True, _random_samples=u)",
     "x = mk.randn(3, 5, 5, 5); u = mk.rand(2, 3, 3)")
case("fmp3d_samples_wrong_channels", "fmp", "F.fractional_max_pool3d(x, 2, output_size=2, _random_samples=u)",
     "x = mk.randn(3, 5, 5, 5); u = mk.rand(2, 4, 3)")
case("fmp2d_one_output", "fmp",
     "F.fractional_max_pool2d(x, 2, output_size=(1, 3), return_indices=True)",
     "x = mk.randn(1, 2, 5, 6)", "seed")
case("fmp2d_nan_ties", "fmp", "F.fractional_max_pool2d(x, 2, output_size=3, return_indices=True)",
     "x = mk.tensor([[[[1., 1., 0., 2.], [float('nan'), 1., 2., 2.], [0., float('nan'), 1., 1.],"
     " [3., 3., 3., 3.]]]])", "seed")
case("fmp2d_bfloat16", "fmp_low", "F.fractional_max_pool2d(x, 2, output_size=(4, 5), return_indices=True)",
     "x = mk.randn(1, 2, 9, 11, dtype='bfloat16')", "seed", "exact")
case("fmp2d_module", "fmp", "grads(lambda x: T.nn.FractionalMaxPool2d(3, output_ratio=0.5)(x), x)",
     "x = mk.randn(2, 2, 9, 9).requires_grad_()", "seed")
case("fmp2d_pool_too_large", "fmp", "F.fractional_max_pool2d(x, 4, output_size=4)",
     "x = mk.randn(1, 1, 6, 6)", "seed")
case("fmp3d_bad_dim", "fmp", "F.fractional_max_pool3d(x, 2, output_size=2)",
     "x = mk.randn(4, 4)", "seed")
case("max_pool3d_indices_grad", "maxpool3d",
     "grads(lambda x: F.max_pool3d(x, 3, stride=2, padding=1, dilation=(1, 2, 1), ceil_mode=True, "
     "return_indices=True), x)", "x = mk.randn(2, 2, 6, 9, 7).requires_grad_()")

case("max_pool3d_grad", "maxpool3d",
     "grads(lambda x: F.max_pool3d(x, 3, stride=2, padding=1, dilation=2, ceil_mode=True), x)",
     "x = mk.randn(2, 2, 6, 9, 7).requires_grad_()")
case("max_pool3d_unbatched", "maxpool3d",
     "grads(lambda x: T.nn.MaxPool3d((2, 3, 2), stride=(1, 2, 2))(x), x)",
     "x = mk.randn(3, 5, 6, 7).requires_grad_()")
case("max_pool3d_batched_grad", "maxpool3d",
     "grads(lambda x: T.nn.MaxPool3d(2, stride=1)(x), x)",
     "x = mk.randn(2, 2, 5, 6, 7).requires_grad_()")
case("max_pool3d_trace", "maxpool3d", "F.max_pool3d(x, 2)", "x = mk.randn(1, 2, 4, 4, 4)",
     "trace", "nograd")

_G, golden, test_agrees_with_upstream = golden_suite(CASES, "pool_golden")
