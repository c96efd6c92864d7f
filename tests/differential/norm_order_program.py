"""Vector norms whose bits depend on the accumulation order, run on either torch.

Prints one JSON document: {"threads": n, "capability": ..., "cases": [[name, hex bytes], ...]}.
Inputs are drawn with numpy from fixed seeds, so both sides reduce the same values; every value
is reported as its raw bytes. Arguments: ``--threads N`` (intra-op threads), ``--suite
quick|slow``.
"""

import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent / "harness"))
from prelude import OrderProgram  # noqa: E402
import torch.nn.functional as F

prog = OrderProgram()

rng = np.random.default_rng(20261215)
cases = prog.cases
quick = prog.quick


def data(*shape, dtype=torch.float32):
    x = torch.from_numpy(rng.standard_normal(shape).astype(np.float32))
    return x.to(dtype)


record = prog.record


def control(name, x, ord):
    # the order torchnative used before: float64 over |x|, rounded once into float32
    a = np.abs(x.double().numpy())
    v = np.sqrt((a * a).sum(-1)) if ord == 2 else a.sum(-1)
    cases.append([f"control {name}", v.astype(np.float32).tobytes().hex()])


vn = torch.linalg.vector_norm

# rows of every length: the last-dim loop (ord 2) and the generic loop (others)
lengths = range(1, 301) if not quick else sorted(
    set(range(1, 70)) | set(rng.integers(70, 301, 25).tolist()) | {128, 255, 256, 300})
for n in lengths:
    x = data(64, n)
    for ord in (2, 1):
        record(f"rows n={n} ord={ord}", vn(x, ord, dim=-1))
        control(f"rows n={n} ord={ord}", x, ord)
    record(f"cols n={n} ord=2", vn(x.t().contiguous(), dim=0))
    if n % 7 == 0 or n < 20:
        record(f"rows n={n} ord=2 float64", vn(x.double(), dim=-1))
        record(f"rows n={n} ord=2 bfloat16", vn(x.bfloat16(), dim=-1))
        record(f"rows n={n} ord=2 float16", vn(x.half(), dim=-1))
        for ord in (float("inf"), -float("inf"), 0, 3, -1, 0.5):
            record(f"rows n={n} ord={ord}", vn(x, ord, dim=-1))

# full reductions, large ones cross the threaded split
for n in [7, 1000, 32767, 32768, 40000] + ([100_003, 1_000_003] if not quick else [100_003]):
    x = data(n)
    for ord in (2, 1, 3):
        record(f"full n={n} ord={ord}", vn(x, ord))
    record(f"full strided n={n} ord=2", vn(x[::2]))
    record(f"full n={n} ord=2 float64", vn(x.double()))

# layouts and arguments
x = data(6, 50, 37)
for dim in (0, 1, 2, (0, 2), (1, 2), (0, 1), None):
    for keepdim in (False, True):
        record(f"3d dim={dim} keepdim={keepdim}", vn(x, dim=dim, keepdim=keepdim))
    record(f"3d permuted dim={dim}", vn(x.permute(2, 0, 1), dim=dim))
    record(f"3d sliced dim={dim} ord=1", vn(x[:, ::3], 1, dim=dim))
record("expanded", vn(data(1, 40).expand(5, 40), dim=-1))
record("dtype=float64", vn(x, dim=-1, dtype=torch.float64))
record("bfloat16 dtype=float32", vn(x.bfloat16(), dim=-1, dtype=torch.float32))
record("float16 dtype=float32", vn(x.half(), dim=1, dtype=torch.float32))
c = torch.complex(data(30, 45), data(30, 45))
for ord in (2, 1, float("inf"), 3):
    record(f"complex64 ord={ord}", vn(c, ord, dim=-1))
record("complex64 dtype=complex128", vn(c, dim=-1, dtype=torch.complex128))
for ord in (2, 1, 3, float("inf"), 0.5, 0):
    record(f"float64 cols ord={ord}", vn(x.double(), ord, dim=0))
    record(f"float16 cols ord={ord}", vn(x.half(), ord, dim=0))
    record(f"complex128 ord={ord}", vn(c.to(torch.complex128), ord, dim=-1))
    record(f"complex64 full ord={ord}", vn(c, ord))
record("float16 full 50000", vn(data(50000).half()))
record("complex64 full 40000", vn(torch.complex(data(40000), data(40000))))

# linalg._powsum: the same loops without the root (NormOps for every ord but 2)
for ord in (2, 1, 3, 0, -1, float("inf")):
    record(f"_powsum rows ord={ord}", torch.linalg._powsum(y := data(30, 45), ord, dim=-1))
    record(f"_powsum cols ord={ord}", torch.linalg._powsum(y, ord, dim=0))
    record(f"_powsum full ord={ord}", torch.linalg._powsum(y, ord))
record("_powsum bfloat16", torch.linalg._powsum(y.bfloat16(), 2, dim=-1))
record("_powsum complex64", torch.linalg._powsum(torch.complex(y, y), 2, dim=-1))

# what builds on it
y = data(200, 33)
record("Tensor.norm", y.norm(dim=-1))
record("Tensor.norm p=1", y.norm(p=1, dim=0))
record("Tensor.norm full", y.norm())
record("F.normalize", F.normalize(y, dim=-1))
record("cosine_similarity", F.cosine_similarity(y, data(200, 33), dim=-1))
m = torch.nn.Linear(33, 17)
with torch.no_grad():
    for prm in m.parameters():
        prm.copy_(data(*prm.shape))
    for prm in m.parameters():
        prm.grad = data(*prm.shape)
record("clip_grad_norm_", torch.nn.utils.clip_grad_norm_(m.parameters(), 1.0))

prog.finish()
