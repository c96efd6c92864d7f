"""Operators upstream runs as C++ kernels that ours served through upstream's Python
decompositions (torch._decomp / torch._refs: many small dispatched calls each): those given
kernels or upstream's composites since 2026-12-07 (constructors, activations and their
gradients, losses' and softmax's gradients, embedding's gradient, the views' backward and the
scatters, rearrangements, windows, padding's backward, im2col/col2im) and those still served so
(since given kernels too: upsampling, smooth_l1/huber, the shrinks, max_pool3d, the
activation gradients), against upstream in the same run. ``PYTHONPATH=<another tree>/src`` in
front times that tree.

Usage: .venv/bin/python bench/decomposed_ops.py [--rounds 3] [--threads 1]
Prints CPU microseconds per call (the fastest of 5 batches of 100) and ours/upstream.
"""

from __future__ import annotations

import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402


def cases(torch):
    F = torch.nn.functional
    torch.manual_seed(0)
    x = torch.randn(16, 64)
    mask = torch.rand(16, 64) > 0.5
    img = torch.randn(1, 8, 16, 16)
    y, s = torch.randn(16, 64), torch.softmax(x, -1)
    idx = torch.randint(0, 20, (16,))
    win = torch.randn(16, 31, 4)
    padded = torch.randn(1, 8, 18, 18)
    cols = F.unfold(img, 3, padding=1)
    up_grad = torch.randn(1, 8, 32, 32)
    batch, grid = torch.randn(2, 3, 16, 16), torch.rand(2, 8, 8, 2) * 2 - 1
    gn_x, gn_w = torch.randn(2, 32, 16, 16), torch.randn(32)
    A = torch.ops.aten
    _, gn_mean, gn_rstd = A.native_group_norm(gn_x, gn_w, None, 2, 32, 256, 8, 1e-5)
    big_x, big_w = torch.randn(8, 64, 32, 32), torch.randn(64)
    _, big_mean, big_rstd = A.native_group_norm(big_x, big_w, None, 8, 64, 1024, 32, 1e-5)
    big_img, s0 = torch.randn(1, 8, 64, 64), torch.softmax(x, 0)
    wide = torch.randn(16, 128)
    go = torch.tensor(1.0)
    vol, small_vol = torch.randn(2, 4, 8, 16, 16), torch.randn(1, 4, 8, 8, 8)
    seq, seq_grad, rgb = torch.randn(2, 8, 64), torch.randn(2, 8, 128), torch.randn(1, 3, 16, 16)
    return {
        "new_zeros(4) (kernel)": lambda: x.new_zeros(4),
        "relu6 16x64 (composite)": lambda: F.relu6(x),
        "selu 16x64 (composite)": lambda: F.selu(x),
        "pixel_shuffle 1x8x16x16 (kernel)": lambda: F.pixel_shuffle(img, 2),
        "glu 16x64": lambda: F.glu(x),
        "native_dropout_backward 16x64": lambda: torch.ops.aten.native_dropout_backward(
            x, mask, 2.0),
        "interpolate nearest x2 1x8x16x16": lambda: F.interpolate(img, scale_factor=2),
        "interpolate bilinear x2 1x8x16x16": lambda: F.interpolate(img, scale_factor=2,
                                                                   mode="bilinear"),
        "smooth_l1_loss 16x64": lambda: F.smooth_l1_loss(x, x * 2),
        "slice_scatter 16x64": lambda: torch.slice_scatter(x, x[:, :8], 1, 0, 8),
        "hardshrink 16x64": lambda: F.hardshrink(x),
        "trace 16x16": lambda: torch.trace(x[:, :16]),
        "softshrink 16x64": lambda: F.softshrink(x),
        "sigmoid_backward 16x64": lambda: A.sigmoid_backward(x, s),
        "tanh_backward 16x64": lambda: A.tanh_backward(x, s),
        "gelu_backward 16x64": lambda: A.gelu_backward(x, y),
        "hardtanh_backward 16x64": lambda: A.hardtanh_backward(x, y, -1.0, 1.0),
        "leaky_relu_backward 16x64": lambda: A.leaky_relu_backward(x, y, 0.01, False),
        "elu_backward 16x64": lambda: A.elu_backward(x, 1.0, 1.0, 1.0, False, y),
        "softplus_backward 16x64": lambda: A.softplus_backward(x, y, 1.0, 20.0),
        "gelu_backward 16x64, strided x": lambda: A.gelu_backward(x, wide[:, ::2]),
        "gelu_backward tanh 16x64": lambda: A.gelu_backward(x, y, approximate="tanh"),
        "hardswish_backward 16x64": lambda: A.hardswish_backward(x, y),
        "mish_backward 16x64": lambda: A.mish_backward(x, y),
        "logit_backward 16x64": lambda: A.logit_backward(x, s),
        "logit_backward eps 16x64": lambda: A.logit_backward(x, s, 1e-6),
        "_softmax_backward_data 16x64": lambda: A._softmax_backward_data(x, s, -1,
                                                                          torch.float32),
        "mse_loss_backward 16x64": lambda: A.mse_loss_backward(x, y, s, 1),
        "embedding_dense_backward 16x64, 20 rows": lambda: A.embedding_dense_backward(
            x, idx, 20, -1, False),
        "slice_backward 16x32 of 16x64": lambda: A.slice_backward(x[:, :32], [16, 64], 1, 0,
                                                                  32, 1),
        "select_backward 16x64 of 16x4x64": lambda: A.select_backward(x, [16, 4, 64], 1, 2),
        "unfold_backward 16x31x4 (step 2)": lambda: A.unfold_backward(win, [16, 64], 1, 4, 2),
        "rot90 1x8x16x16": lambda: torch.rot90(img, 1, (2, 3)),
        "channel_shuffle 1x8x16x16": lambda: F.channel_shuffle(img, 2),
        "block_diag 16x64, 16x16": lambda: torch.block_diag(x, x[:, :16]),
        "hann_window 400": lambda: torch.hann_window(400),
        "arange(401.)": lambda: torch.arange(401.),
        "log_sigmoid_backward 16x64": lambda: A.log_sigmoid_backward(x, y, s),
        "reflection_pad2d_backward 1x8x18x18": lambda: A.reflection_pad2d_backward(
            padded, img, [1, 1, 1, 1]),
        "F.unfold 3x3 of 1x8x16x16 (im2col)": lambda: F.unfold(img, 3, padding=1),
        "F.fold back (col2im)": lambda: F.fold(cols, (16, 16), 3, padding=1),
        "silu_backward 16x64": lambda: A.silu_backward(x, y),
        "upsample_nearest2d_backward 1x8x32x32": lambda: A.upsample_nearest2d_backward(
            up_grad, [32, 32], [1, 8, 16, 16]),
        "upsample_bilinear2d_backward 1x8x32x32": lambda: A.upsample_bilinear2d_backward(
            up_grad, [32, 32], [1, 8, 16, 16], False),
        "grid_sample bilinear 2x3x16x16, 8x8 grid": lambda: F.grid_sample(
            batch, grid, align_corners=False),
        "native_group_norm_backward 2x32x16x16, 8 groups": lambda: A.native_group_norm_backward(
            gn_x, gn_x, gn_mean, gn_rstd, gn_w, 2, 32, 256, 8, [True, True, True]),
        "native_group_norm_backward 8x64x32x32, 32 groups": lambda: A.native_group_norm_backward(
            big_x, big_x, big_mean, big_rstd, big_w, 8, 64, 1024, 32, [True, True, True]),
        "interpolate bilinear x2 1x8x64x64": lambda: F.interpolate(big_img, scale_factor=2,
                                                                   mode="bilinear"),
        "_softmax_backward_data dim 0 16x64": lambda: A._softmax_backward_data(x, s0, 0,
                                                                               torch.float32),
        "smooth_l1_loss_backward 16x64": lambda: A.smooth_l1_loss_backward(go, x, y, 1, 1.0),
        "huber_loss 16x64": lambda: F.huber_loss(x, y),
        "hardshrink_backward 16x64": lambda: A.hardshrink_backward(y, x, 0.5),
        "max_pool3d 2x4x8x16x16, k3 s2 p1": lambda: F.max_pool3d(vol, 3, 2, 1),
        "interpolate linear x2 2x8x64": lambda: F.interpolate(seq, scale_factor=2,
                                                              mode="linear"),
        "interpolate trilinear x2 1x4x8x8x8": lambda: F.interpolate(
            small_vol, scale_factor=2, mode="trilinear"),
        "interpolate bicubic x2 1x3x16x16": lambda: F.interpolate(rgb, scale_factor=2,
                                                                  mode="bicubic"),
        "upsample_linear1d_backward 2x8x128": lambda: A.upsample_linear1d_backward(
            seq_grad, [128], [2, 8, 64], False),
    }


def worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    result = {}
    for name, fn in cases(torch).items():
        try:
            fn()
        except NotImplementedError:  # refused by name (an older tree): no figure
            result[name] = float("nan")
            continue
        n = 100
        times = timeit.repeat(fn, number=n, repeat=5, timer=time.process_time)
        result[name] = min(times) / n * 1e6
    _harness.emit(result)


if __name__ == "__main__":
    _harness.main(__file__, worker)
