"""Public calls a small training step or a decode step makes, one by one, ours vs upstream in the
same run: CPU µs per call (median of five repeats), with and without autograd recording.

Usage: .venv/bin/python bench/small_calls.py [--rounds 3] [--threads 1]
Shapes are bench/train_step.py's MLP (a batch of 64 through 64 -> 128 -> 10) and SmolLM2's decode
rows (1 x 576, 1 x 1536); a whole-tensor sum is a loss's; the samplers' are a few elements
(dropout's a CNN's 16 x 256), where a call's fixed costs are all there is. Each case is the
public spelling a user's program uses (a method, a function, a module, an optimizer), so the
figure includes the binding, the door, autograd's recording and the kernel.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402


def cases(torch):
    nn, F = torch.nn, torch.nn.functional
    torch.manual_seed(0)
    h, w = torch.rand(64, 128), torch.rand(64, 10, requires_grad=True)
    wd = w.detach()
    y = torch.randint(0, 10, (64,))
    logp = torch.log_softmax(w, 1)
    lin = nn.Linear(64, 128)
    x = torch.rand(64, 64)
    row, wide = torch.rand(1, 1, 576), torch.rand(1, 1, 1536)
    acc, g = torch.zeros(128, 64), torch.rand(128, 64) - 0.5  # (a sum that stays small)
    drop = torch.rand(16, 256)
    arr = drop.numpy()[0, :100].copy()
    p = nn.Parameter(torch.rand(72))
    p.grad = torch.rand(72)
    sgd = torch.optim.SGD([p], lr=0.01, momentum=0.9)
    adam = torch.optim.Adam([p], lr=1e-3)
    sgd.step()
    adam.step()
    gen = torch.Generator().manual_seed(0)
    probs = torch.softmax(torch.rand(1, 49152), -1)  # a sampled decode step's distribution
    one = torch.empty(1)
    return {
        "add 64x10, recorded": lambda: w + w,
        "add 64x10": lambda: wd + wd,
        "neg 64x10, recorded": lambda: -w,
        "relu 64x128": lambda: torch.relu(h),
        "log_softmax 64x10, recorded": lambda: torch.log_softmax(w, 1),
        "log_softmax 64x10": lambda: torch.log_softmax(wd, 1),
        "nll_loss 64x10, recorded": lambda: F.nll_loss(logp, y),
        "cross_entropy 64x10, recorded": lambda: F.cross_entropy(w, y),
        "sum() 64x10 (a loss's sum)": lambda: wd.sum(),
        "sum() 64x128": lambda: h.sum(),
        "mean() 64x128": lambda: h.mean(),
        "sum(0) 64x128": lambda: h.sum(0),
        "sum(0) 64x10": lambda: wd.sum(0),
        "nn.Linear 64->128, recorded": lambda: lin(x),
        "detach": lambda: w.detach(),
        "view(1, 1, -1, 64) of 1x1x576": lambda: row.view(1, 1, -1, 64),
        "mean(-1, keepdim) 1x1x576": lambda: row.mean(-1, keepdim=True),
        "silu 1x1x1536": lambda: F.silu(wide),
        "torch.tensor(0.5)": lambda: torch.tensor(0.5),
        "torch.tensor of 4 floats": lambda: torch.tensor([0.1, 0.2, 0.3, 0.4]),
        "torch.tensor of a 2x3 nested list": lambda: torch.tensor([[1., 2., 3.], [4., 5., 6.]]),
        "torch.tensor of a 100-float32 array": lambda: torch.tensor(arr),
        "rand(10)": lambda: torch.rand(10),
        "randn(10)": lambda: torch.randn(10),
        "randn(4, generator=g)": lambda: torch.randn(4, generator=gen),
        "multinomial 1x49152, 1 sample": lambda: torch.multinomial(probs, 1),
        # a data pipeline's per-sample draws (a random crop's offset, a scale)
        "randint(0, 10, (1,))": lambda: torch.randint(0, 10, (1,)),
        "uniform_(0.08, 1.0) of 1 value": lambda: one.uniform_(0.08, 1.0),
        "dropout(0.25) 16x256, training": lambda: F.dropout(drop, 0.25, True),
        "SGD momentum step, one 72-value parameter": sgd.step,
        "Adam step, one 72-value parameter": adam.step,
        "add_(g, alpha=1.0) 128x64, no grad": lambda: acc.add_(g, alpha=1.0),
        "record_function enter": lambda: torch.ops.profiler._record_function_enter_new("x", None),
        # torch.ops as decompositions and library code call it: a packet picks its overload
        "torch.ops.aten.add packet 64x10": lambda: torch.ops.aten.add(wd, wd),
        "torch.ops.aten.add.Tensor 64x10": lambda: torch.ops.aten.add.Tensor(wd, wd),
        "torch.ops.aten.mul packet, a number": lambda: torch.ops.aten.mul(wd, 2.0),
    }


def worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)
    _harness.emit({k: _harness.cpu_us_per_call(f) for k, f in cases(torch).items()})


if __name__ == "__main__":
    _harness.main(__file__, worker)
