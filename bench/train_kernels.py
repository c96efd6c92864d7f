"""The kernels a training step of bench/train_step.py calls, one by one at that step's shapes,
ours vs upstream in the same run: CPU µs per call (median of five repeats).

Usage: .venv/bin/python bench/train_kernels.py [--rounds 3] [--threads 1]
Each case calls the ATen operator directly (torch.ops.aten), so the figure is the kernel plus
one door call on ours, against upstream's dispatcher and kernel: the CNN's convolutions, max
pooling and batch norm (batch 16 of 1x16x16, 8 then 16 channels), the MLP's and CNN's loss and
activation backwards, the MLP's row sum and addmm, MiniLM's layer norm and GELU backwards (4
sentences x 10 tokens).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402


def cases(torch):
    A = torch.ops.aten
    torch.manual_seed(0)
    out = {}
    for name, (n, c, s, o) in {"conv1": (16, 1, 16, 8), "conv2": (16, 8, 8, 16)}.items():
        x, w, b = torch.randn(n, c, s, s), torch.randn(o, c, 3, 3), torch.randn(o)
        g = torch.randn(n, o, s, s)
        out[f"cnn convolution {name}"] = (
            lambda x=x, w=w, b=b: A.convolution(x, w, b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1))
        mask = [name == "conv2", True, True]
        out[f"cnn convolution_backward {name}"] = (
            lambda g=g, x=x, w=w, o=o, mask=mask: A.convolution_backward(
                g, x, w, [o], [1, 1], [1, 1], [1, 1], False, [0, 0], 1, mask))
    for name, shape in {"pool1": (16, 8, 16, 16), "pool2": (16, 16, 8, 8)}.items():
        x = torch.randn(shape)
        out[f"cnn max_pool2d_with_indices {name}"] = (
            lambda x=x: A.max_pool2d_with_indices(x, [2, 2], [2, 2]))
        y, idx = A.max_pool2d_with_indices(x, [2, 2], [2, 2])
        gy = torch.randn(y.shape)
        out[f"cnn max_pool2d_with_indices_backward {name}"] = (
            lambda gy=gy, x=x, idx=idx: A.max_pool2d_with_indices_backward(
                gy, x, [2, 2], [2, 2], [0, 0], [1, 1], False, idx))
        c = shape[1]
        w, b, rm, rv = torch.rand(c) + 0.5, torch.randn(c), torch.zeros(c), torch.ones(c)
        out[f"cnn native_batch_norm {name}"] = (
            lambda x=x, w=w, b=b, rm=rm, rv=rv: A.native_batch_norm(x, w, b, rm, rv, True, 0.1,
                                                                    1e-5))
        _, mean, invstd = A.native_batch_norm(x, w, b, rm.clone(), rv.clone(), True, 0.1, 1e-5)
        g = torch.randn(shape)
        out[f"cnn native_batch_norm_backward {name}"] = (
            lambda g=g, x=x, w=w, rm=rm, rv=rv, mean=mean, invstd=invstd:
            A.native_batch_norm_backward(g, x, w, rm, rv, mean, invstd, True, 1e-5, [True] * 3))
        out[f"cnn threshold_backward {name}"] = lambda g=g, x=x: A.threshold_backward(g, x, 0)
    logits, target = torch.randn(64, 10), torch.randint(0, 10, (64,))
    logp = A._log_softmax(logits, 1, False)
    out["mlp nll_loss_forward"] = lambda: A.nll_loss_forward(logp, target, None, 1, -100)
    gl = torch.tensor(1.0)
    total = A.nll_loss_forward(logp, target, None, 1, -100)[1]
    out["mlp nll_loss_backward"] = lambda: A.nll_loss_backward(gl, logp, target, None, 1, -100,
                                                               total)
    gp = torch.randn(64, 10)
    out["mlp _log_softmax_backward_data"] = lambda: A._log_softmax_backward_data(
        gp, logp, 1, torch.float32)
    out["mlp sum.dim_IntList (64, 10), dim 1"] = lambda: A.sum.dim_IntList(gp, [1], True)
    h1, w1, b1 = torch.randn(64, 64), torch.randn(128, 64).t(), torch.randn(128)  # linear's
    out["mlp addmm (64, 64) x (64, 128)^T"] = lambda: A.addmm(b1, h1, w1)
    x = torch.randn(4, 10, 384)
    w, b = torch.rand(384) + 0.5, torch.randn(384)
    _, mean, rstd = A.native_layer_norm(x, [384], w, b, 1e-12)
    g = torch.randn(4, 10, 384)
    out["minilm native_layer_norm"] = lambda: A.native_layer_norm(x, [384], w, b, 1e-12)
    out["minilm native_layer_norm_backward"] = lambda: A.native_layer_norm_backward(
        g, x, [384], mean, rstd, w, b, [True] * 3)
    h, gh = torch.randn(4, 10, 1536), torch.randn(4, 10, 1536)
    out["minilm gelu_backward"] = lambda: A.gelu_backward(gh, h)
    return out


if __name__ == "__main__":
    _harness.main(__file__, lambda threads: _harness.time_cases_worker(cases, threads), unit="us")
