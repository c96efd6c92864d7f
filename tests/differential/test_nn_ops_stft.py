"""torch.stft (center padding by upstream's Python, then aten::stft: frames, window, FFT) against
upstream torch 2.13.0 in a separate process: windows shorter than n_fft, hops, normalization,
one- and two-sided, real and complex input, the real-view output, gradients, batched and
unbatched, and the missing return_complex error. Judged by the kernel golden harness."""

from __future__ import annotations

import textwrap

from kernel_golden import golden_suite

CASES: list = []


def case(name, expr, setup="", *flags):
    CASES.append((name, "stft", textwrap.dedent(setup), expr, list(flags)))


X = "x = mk.randn(2, 200).requires_grad_()\n"
case("default", "grads(lambda x: T.view_as_real(T.stft(x, 32, return_complex=True)), x)", X)
case("hann_short_window_normalized",
     "grads(lambda x: T.view_as_real(T.stft(x, 32, hop_length=5, win_length=20, window=w, "
     "normalized=True, return_complex=True)), x)", X + "w = T.hann_window(20, dtype=x.dtype)")
case("no_center_two_sided",
     "T.stft(x, 64, center=False, onesided=False, return_complex=True)", X, "nograd")
case("constant_pad_unbatched",
     "T.stft(x[0], 16, hop_length=3, center=True, pad_mode='constant', return_complex=True)", X,
     "nograd")
case("real_view_output", "T.stft(x, 16, win_length=10, return_complex=False)", X, "nograd")
case("complex_input", "T.stft(z, 16, window=T.hann_window(16, dtype=x.dtype), "
     "return_complex=True)", "x = mk.randn(100); z = T.complex(x, mk.randn(100))", "nograd")
case("missing_return_complex", "T.stft(x, 16)", X, "nograd")

_G, golden, test_agrees_with_upstream = golden_suite(CASES, "stft_golden")
