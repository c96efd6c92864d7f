"""How far upstream moves from itself across CPU capabilities, and where ours sits.

    .venv/bin/python tools/cpu_spread.py

Runs one program of common operations (4,096 float32 inputs each) on upstream under every CPU
profile this machine can run (``torchnative.testing.upstream.CPU_PROFILES``) and on ours under the
same settings, and prints, per operation, how many elements differ in their bits:
upstream's native capability against each other profile, and ours against upstream on each.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from torchnative.csrc.platform import cpu_capability as cap  # noqa: E402
from torchnative.testing import upstream  # noqa: E402

PROGRAM = r'''
import sys
import numpy as np
import torch
F = torch.nn.functional
x = torch.from_numpy((np.random.default_rng(0).standard_normal(4096) * 3).astype(np.float32))
m = x.reshape(64, 64)
g = lambda: torch.Generator().manual_seed(0)
out = {
    "gelu": F.gelu(x), "gelu (strided)": F.gelu(m.t()).t().reshape(-1),
    "gelu tanh": F.gelu(x, approximate="tanh"), "erf": torch.erf(x), "exp": torch.exp(x),
    "log": torch.log(x.abs()), "tanh": torch.tanh(x), "sigmoid": torch.sigmoid(x), "silu": F.silu(x),
    "sqrt": torch.sqrt(x.abs()), "sum (rows)": m.sum(-1), "softmax": torch.softmax(m, -1),
    "log_softmax": torch.log_softmax(m, -1), "layer_norm": F.layer_norm(m, (64,)),
    "linear": F.linear(m, m[:32]), "mm": m @ m, "addcmul": torch.addcmul(x, x, x, value=0.3),
    "lerp": torch.lerp(x, x.flip(0), 0.3), "randn": torch.randn(4096, generator=g()),
    "uniform_(-2, 3)": torch.empty(4096).uniform_(-2, 3, generator=g()),
    "logit": torch.logit(torch.rand(4096, generator=g()).clamp(0.01, 0.99)),
}
# a bfloat16 convolution's gradients (oneDNN's backend or the slow kernels, by the CPU)
xb = x[:256].reshape(8, 1, 32).bfloat16().requires_grad_()
wb = x[:80].reshape(16, 1, 5).bfloat16().requires_grad_()
gb = torch.autograd.grad(F.conv1d(xb, wb, padding=2), (xb, wb), m.reshape(8, 16, 32).bfloat16())
out["conv1d bf16 input / weight grad"] = torch.cat([v.reshape(-1) for v in gb]).view(torch.int16)
np.savez(sys.argv[1], **{k: v.reshape(-1).numpy() for k, v in out.items()})
'''


def run(python: str, env: dict, path: Path) -> dict:
    script = path.with_suffix(".py")
    script.write_text(PROGRAM)
    subprocess.run([python, str(script), str(path)], env=env, check=True)
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def main() -> int:
    native = cap.detect(cap.FLAGS)
    names = [n for n in ("DEFAULT", "AVX2", "AVX512") if n in upstream.other_cpu_profiles() or n == native]
    with tempfile.TemporaryDirectory() as d:
        up, ours = {}, {}
        for name in names:
            extra = {} if name == native else upstream.CPU_PROFILES[name]
            up[name] = run(str(upstream.UPSTREAM_PYTHON), {**upstream.upstream_env(), **extra},
                           Path(d) / f"up_{name}.npz")
            mine = {**os.environ, **extra}
            ours[name] = run(upstream.ours_python(), mine, Path(d) / f"ours_{name}.npz")
    print(f"CPU: {native} ({cap.CAPABILITY} in force); elements (of 4,096 or fewer) whose bits differ")
    cols = [f"upstream {native} vs {n}" for n in names if n != native] + [f"ours vs upstream {n}" for n in names]
    print("| operation | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for op in up[native]:
        cells = [int((up[native][op] != up[n][op]).sum()) for n in names if n != native]
        cells += [int((ours[n][op] != up[n][op]).sum()) for n in names]
        print(f"| {op} | " + " | ".join(str(c) for c in cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
