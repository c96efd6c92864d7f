"""Floating sums whose bits depend on the accumulation order, run on either torch.

Prints one JSON document: {"threads": n, "capability": ..., "cases": [[name, hex bytes], ...]}.
Inputs are drawn with numpy from fixed seeds, so both sides sum the same values; every value is
reported as its raw bytes. Arguments: ``--threads N`` (intra-op threads), ``--suite quick|slow``.
"""

import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent / "harness"))
from prelude import OrderProgram  # noqa: E402

prog = OrderProgram()

rng = np.random.default_rng(20261202)
cases = prog.cases


def data(*shape, scale=1.0):
    # mixed signs and magnitudes: cancellation makes the order visible in the last bits
    x = rng.standard_normal(shape) * np.exp(rng.uniform(-3, 3, shape)) * scale
    return torch.from_numpy(x.astype(np.float32))


record = prog.record


quick = prog.quick

# the README's example: four float32 elements
torch.manual_seed(6)
w = torch.rand(4) + 0.5
record("readme w[[0,3,3,1]].sum()", w[[0, 3, 3, 1]].sum())
cases.append(["control readme", np.float32(w[[0, 3, 3, 1]].numpy().astype(np.float64).sum())
              .tobytes().hex()])

# full sums over every length 1..4096 (the slow suite: every length; quick: a spread)
lengths = range(1, 4097) if not quick else sorted(
    set(range(1, 130)) | set(rng.integers(130, 4097, 60).tolist()) | {255, 256, 257, 1023, 1024,
                                                                        1025, 4095, 4096})
for n in lengths:
    x = data(n)
    record(f"sum n={n}", x.sum())
    # the order torchnative used before: one float64 sum, rounded once (numpy on both sides)
    cases.append([f"control n={n}", np.float32(x.numpy().astype(np.float64).sum()).tobytes().hex()])

# rows summed along their length, one output each (the row plan: RMSNorm's mean, sum(-1)),
# in float32 and float64, one row and several, dense and with a gap between rows
for n in lengths if quick else range(1, 4097, 3):
    x = data(3, n + 1)
    record(f"rows sum n={n}", x[:1, :n].sum(-1))
    record(f"rows mean n={n}", x[:, :n].mean(-1, keepdim=True))
    record(f"rows double n={n}", x[:, :n].double().sum(-1))
for shape in [(1, 1, 576), (1, 9, 576), (1, 128, 576), (1, 512, 576), (2, 3, 1536), (70, 600)]:
    x = data(*shape)
    record(f"rows mean {shape}", x.mean(-1, keepdim=True))
    record(f"rows square mean {shape}", x.pow(2).mean(-1, keepdim=True))
    record(f"rows sum {shape} double", x.double().sum(-1))

# large: the threaded split (two-pass for a full sum, columns for a dim sum) and level_power 5
for n in ([32767, 32768, 32769, 100_003, 1_000_003] if quick else
          [32767, 32768, 32769, 65537, 100_003, 1_000_003, 2_097_152, 4_000_037]):
    x = data(n)
    record(f"large sum n={n}", x.sum())
    record(f"large mean n={n}", x.mean())

# dim-0 sums the threads split by columns: ranges of whole 128-byte groups, a last range narrower
# than a vector (36 columns over 8 threads), fewer columns than threads
for shape in [(1024, 36), (911, 37), (40, 1536), (33, 1000), (3000, 11)]:
    x = data(*shape)
    record(f"columns split {shape}", x.sum(0))
    record(f"columns split {shape} double", x.double().sum(0, keepdim=True))

shapes = [(3, 5), (7, 9), (16, 33), (33, 16), (5, 64), (64, 5), (2, 3, 40), (40, 3, 2),
          (4, 17, 9), (3, 8, 8, 5), (128, 300), (300, 128), (1, 1, 37), (37, 1, 1)]
if not quick:
    shapes += [(1000, 1000), (250, 7, 40), (513, 129), (129, 513), (9, 10, 11, 12)]
for shape in shapes:
    x = data(*shape)
    nd = len(shape)
    dims = [None] + [(d,) for d in range(nd)] + [(0, nd - 1)] + ([(1, 2)] if nd > 2 else [])
    views = {"contig": x, "T": x.permute(*reversed(range(nd))),
             "sliced": x[..., : max(1, shape[-1] - 1)],
             "step2": x[::2] if shape[0] > 1 else x}
    for vname, v in views.items():
        for dim in dims:
            for keepdim in (False, True):
                tag = f"{shape} {vname} dim={dim} keepdim={keepdim}"
                if dim is None:
                    if keepdim:
                        continue
                    record("sum " + tag, v.sum())
                    record("mean " + tag, v.mean())
                    continue
                record("sum " + tag, v.sum(dim, keepdim=keepdim))
                record("mean " + tag, v.mean(dim, keepdim=keepdim))
                record("nansum " + tag, v.nansum(dim, keepdim=keepdim))
        record(f"sum {shape} {vname} dtype=float64", v.sum(dtype=torch.float64))
        record(f"sum {shape} {vname} double", v.double().sum(-1))

# expanded (stride 0) and overlapping inputs
x = data(6, 1, 50)
record("expanded sum", x.expand(6, 7, 50).sum())
record("expanded sum dim1", x.expand(6, 7, 50).sum(1))
record("expanded sum dim(0,2)", x.expand(6, 7, 50).sum((0, 2)))
y = data(300)
record("as_strided overlap sum", y.as_strided((40, 20), (5, 1)).sum(0))

# signed zeros: upstream's accumulators start at +0.0
nz = torch.full((6, 40), -0.0)
record("-0 sum", nz.sum())
record("-0 sum dim0", nz.sum(0))
record("-0 sum dim1", nz.sum(1))
record("-0 0-dim sum", torch.tensor(-0.0).sum())
record("-0 half sum", nz.half().sum(1))
record("-0 mean", nz.mean(1))

# NaNs for nansum
z = data(10, 70)
z[z > 2] = float("nan")
record("nansum nan full", z.nansum())
record("nansum nan dim1", z.nansum(1))
record("nansum nan dim0", z.nansum(0))

# float16 / bfloat16 (summed in float32) and float64
for dt in (torch.float16, torch.bfloat16, torch.float64):
    for shape in [(37,), (100,), (1000,), (16, 33), (33, 16), (4, 17, 9), (128, 300)]:
        x = data(*shape, scale=0.5).to(dt)
        nd = len(shape)
        tag = f"{dt} {shape}"
        record("sum " + tag, x.sum())
        record("mean " + tag, x.mean())
        if nd > 1:
            for d in range(nd):
                record(f"sum dim={d} " + tag, x.sum(d))
                record(f"sum T dim={d} " + tag, x.transpose(0, -1).sum(d))
                record(f"mean dim={d} " + tag, x.mean(d, keepdim=True))
            record("sum sliced " + tag, x[..., :-1].sum())
            record("sum dims(0,-1) " + tag, x.sum((0, nd - 1)))
            record("nansum dim0 " + tag, x.nansum(0))
            # no float32 buffer for nansum: the second reduced dim accumulates in the result dtype
            record("nansum dims(0,-1) " + tag, x.nansum((0, nd - 1)))
            record("nansum T dims(0,-1) " + tag, x.transpose(0, -1).nansum((0, nd - 1)))
        record("sum dtype=float32 " + tag, x.sum(dtype=torch.float32))
    xs = data(3000)
    record(f"sum {dt} from float32 dtype=", xs.sum(dtype=dt))
    record(f"sum {dt} large", data(70000).to(dt).sum())
    record(f"sum {dt} large dim", data(300, 250).to(dt).sum(0))

# complex64
c = torch.complex(data(40, 30), data(40, 30))
record("complex sum", c.sum())
record("complex sum dim0", c.sum(0))
record("complex sum dim1", c.sum(1))

# random geometries: shapes of 1-4 dims, permuted, sliced with steps, expanded, any dim subset
fz = np.random.default_rng(7)
for i in range(300 if quick else 1500):
    nd = int(fz.integers(1, 5))
    shape = [int(fz.integers(1, 24 if nd > 2 else 90)) for _ in range(nd)]
    dt = [torch.float32, torch.float32, torch.float64, torch.float16, torch.bfloat16][
        int(fz.integers(0, 5))]
    x = data(*[s * 2 for s in shape]).to(dt)  # cast while dense: the views below are the same
    x = x[tuple(slice(int(fz.integers(0, 2)), None, int(fz.integers(1, 3))) for _ in range(nd))]
    x = x.permute(*fz.permutation(nd).tolist())
    if fz.random() < 0.2:
        d = int(fz.integers(0, nd))
        x = x.narrow(d, 0, 1).expand(*[int(fz.integers(1, 9)) if j == d else x.shape[j]
                                       for j in range(nd)])
    dims = [j for j in range(nd) if fz.random() < 0.5] or None
    keepdim = bool(fz.random() < 0.5)
    shape_stride = f"{tuple(x.shape)} {x.stride()}"
    op = ["sum", "mean", "nansum", "sum_dtype"][int(fz.integers(0, 4))]
    tag = f"fuzz {i} {op} {dt} {shape_stride} dims={dims} keepdim={keepdim}"
    if op == "sum_dtype":
        record(tag, x.sum(dims, keepdim=keepdim, dtype=torch.float32 if dt != torch.float32
                          else torch.float16))
    else:
        record(tag, getattr(x, op)(dims, keepdim=keepdim))

prog.finish()
