"""The matrix products of one SmolLM2-135M decode step in bfloat16, alone: ``F.linear`` of a
one-token input over random bfloat16 weights of the model's 211 shapes (30 layers' seven
projections and the tied lm_head), CPU ms per pass (median of 5), then the CPU µs of a bfloat16
``mul``, ``add`` and ``.to(float32)`` of 1x576. Run it under each interpreter:

    .venv/bin/python bench/lowp_linears.py; .venv-upstream/bin/python bench/lowp_linears.py
"""

import resource
import statistics
import time

import torch

torch.set_num_threads(1)
torch.manual_seed(0)
SHAPES = [(576, 576), (192, 576), (192, 576), (576, 576), (1536, 576), (1536, 576),
          (576, 1536)] * 30 + [(49152, 576)]


def _us(fn, n=2000):
    c = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - c) / n * 1e6


def main():
    ws = [torch.randn(s).mul(0.05).bfloat16() for s in SHAPES]
    xs = {k: torch.randn(1, 1, k).bfloat16() for k in (576, 1536)}
    linear = torch.nn.functional.linear
    with torch.inference_mode():
        times = []
        for _ in range(6):
            c = time.process_time()
            for w in ws:
                linear(xs[w.shape[1]], w)
            times.append((time.process_time() - c) * 1e3)
        x, y = torch.randn(1, 1, 576).bfloat16(), torch.randn(1, 1, 576).bfloat16()
        print(f"linears per token: {statistics.median(times[1:]):.1f} CPU ms; "
              f"mul {_us(lambda: x * y):.1f} µs, add {_us(lambda: x + y):.1f} µs, "
              f"to(float32) {_us(lambda: x.to(torch.float32)):.1f} µs; peak "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
