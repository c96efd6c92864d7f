"""max_pool3d_with_indices as a kernel (nn_pool3d.py), against upstream torch 2.13.0 in separate
processes, both sides under this CPU's capability and each other one: values and indices bit for
bit, dtypes and strides, for float32/float64/float16/bfloat16 and the integer types; ties (the
first maximum wins), NaN (the last NaN wins), -inf and integer-lowest windows (nothing beats the
initial value: the window's first real position, without its depth term in the channels-last
loop's scalar tail, whose width is the capability's vector), padding, dilation, ceil_mode,
windows past the input, 4-D and 5-D inputs in contiguous, channels-last-3d, transposed and sliced
layouts; every refusal and its message; out= (resizing and restriding); the backward through
F.max_pool3d(return_indices=True), recorded as MaxPool3DWithIndicesBackward0. Control: the
channels-last case's indices as the contiguous loop gives them (no tail rule) differ.
"""

from __future__ import annotations

import sides

PROGRAM = r"""
torch.manual_seed(0)
A, out = torch.ops.aten, {}
case = lambda name, fn: out.__setitem__(name, outcome(fn, bits=True))  # noqa: E731
CL = torch.channels_last_3d
mp = A.max_pool3d_with_indices
x = torch.randint(-4, 5, (2, 3, 7, 8, 9)).float()  # ties everywhere
x.view(-1)[::17] = float("nan")
x.view(-1)[5::23] = float("inf")
x.view(-1)[9::29] = -float("inf")
GEOM = {  # kernel, stride, padding, dilation, ceil_mode
    "k2": ([2], [], [0], [1], False),
    "k3s1p1": ([3], [1], [1], [1], False),
    "k3s2p1-ceil": ([3], [2], [1], [1], True),
    "k(1,2,3)s(2,1,2)p(0,1,1)": ([1, 2, 3], [2, 1, 2], [0, 1, 1], [1, 1, 1], False),
    "dil2": ([2], [1], [1], [2], False),
    "dil(1,2,3)-ceil": ([2, 2, 3], [2, 3, 1], [1, 0, 1], [1, 2, 3], True),
    "k4s3-ceil": ([4], [3], [2], [1], True),
    "stride1-list": ([2, 3, 2], [2], [1], [1], False),
}
for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
    xd = x.to(dt)
    for g, a in GEOM.items():
        case(f"{dt} {g}", lambda: mp(xd, *a))
        case(f"{dt} {g} cl", lambda: mp(xd.contiguous(memory_format=CL), *a))
    case(f"{dt} 4-D", lambda: mp(xd[0], [2], [1], [1], [1], True))
    case(f"{dt} smooth", lambda: mp(torch.randn(2, 5, 6, 7, 8).to(dt), [3], [2], [1], [1], False))
for dt in (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
    lo = torch.iinfo(dt).min
    xi = torch.randint(-3, 4, (2, 3, 5, 6, 7)).to(dt)
    xi.view(-1)[::7] = lo  # windows of only the lowest value keep their first real position
    xi[0, 0, :3, :3, :3] = lo
    for g in ("k2", "k3s1p1", "dil(1,2,3)-ceil"):
        case(f"{dt} {g}", lambda: mp(xi, *GEOM[g]))
        case(f"{dt} {g} cl", lambda: mp(xi.contiguous(memory_format=CL), *GEOM[g]))
# -inf windows in the channels-last loop: the scalar tail's channels drop the depth term
for c in (3, 5, 12, 20, 40, 70):
    e = torch.full((1, c, 4, 4, 4), -float("inf"))
    e[0, :, 3, 3, 3] = 1.0
    for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
        ed = e.to(dt)
        case(f"-inf c{c} {dt} cl", lambda: mp(ed.contiguous(memory_format=CL), [2], [2], [1], [1],
                                                False))
        case(f"-inf c{c} {dt}", lambda: mp(ed, [2], [2], [1], [1], False))
        case(f"-inf c{c} {dt} 4-D cl", lambda: mp(ed.contiguous(memory_format=CL)[0], [3], [2],
                                                    [1], [2], True))
    for dt in (torch.int64, torch.int8, torch.int32):
        ei = torch.full((1, c, 4, 4, 4), torch.iinfo(dt).min, dtype=dt)
        case(f"lowest c{c} {dt} cl", lambda: mp(ei.contiguous(memory_format=CL), [2], [2], [1],
                                                [1], False))
case("control-no-tail", lambda: tuple(t.contiguous(memory_format=CL) for t in mp(
    torch.full((1, 20, 4, 4, 4), -float("inf")), [2], [2], [1], [1], False)))
case("-inf c20 plain cl", lambda: mp(torch.full((1, 20, 4, 4, 4), -float("inf")).contiguous(
    memory_format=CL), [2], [2], [1], [1], False))
# bfloat16 NaNs: the SIMD converter's lanes in the channels-last loop, c10's scalar elsewhere
for c in (5, 16, 40):
    xn = torch.randn(2, c, 4, 5, 6)
    xn.view(-1)[::7] = float("nan")
    xn = xn.bfloat16()
    case(f"bf16 nan c{c}", lambda: mp(xn, [2], [1], [1], [1], False))
    case(f"bf16 nan c{c} cl", lambda: mp(xn.contiguous(memory_format=CL), [2], [1], [1], [1],
                                         False))
    case(f"bf16 nan c{c} 4-D cl", lambda: mp(xn.contiguous(memory_format=CL)[1], [2], [1], [1],
                                             [1], False))
# windows with no real position (dilation steps over the input)
case("empty windows", lambda: mp(torch.randn(1, 2, 2, 2, 2), [2], [1], [1], [3], False))
case("empty windows cl", lambda: mp(torch.randn(2, 3, 2, 2, 2).contiguous(memory_format=CL), [2],
                                    [1], [1], [3], True))
case("dilation 200", lambda: mp(torch.randn(1, 2, 3, 3, 500), [1, 1, 3], [1, 1, 7], [0, 0, 1],
                                [1, 1, 200], False))
case("dilation 200 cl", lambda: mp(torch.randn(1, 2, 3, 3, 500).contiguous(memory_format=CL),
                                   [1, 1, 3], [1, 1, 7], [0, 0, 1], [1, 1, 200], True))
case("kernel 300", lambda: mp(torch.randn(1, 2, 2, 2, 310), [1, 1, 300], [1, 1, 3], [0], [1],
                              False))
# layouts
y = torch.randn(2, 6, 5, 6, 7)
case("transposed", lambda: mp(y.transpose(2, 4), [2], [1], [1], [1], False))
case("sliced cl", lambda: mp(y.contiguous(memory_format=CL)[:, :, ::2], [2], [], [0], [1], False))
case("sliced cl channels", lambda: mp(y.contiguous(memory_format=CL)[:, 1:4], [2], [], [0], [1],
                                      False))
case("4-D permuted", lambda: mp(torch.randn(5, 6, 7, 3).permute(3, 0, 1, 2), [2], [], [0], [1],
                                False))
case("4-D permuted other", lambda: mp(torch.randn(5, 6, 3, 7).permute(2, 0, 1, 3), [2], [], [0],
                                      [1], False))
case("4-D channels-last 2d", lambda: mp(torch.randn(5, 6, 7, 3).permute(0, 3, 1, 2), [2], [],
                                        [0], [1], False))
case("C1 cl", lambda: mp(torch.randn(2, 1, 4, 4, 4).contiguous(memory_format=CL), [2]))
case("N1 cl", lambda: mp(torch.randn(1, 3, 4, 4, 4).contiguous(memory_format=CL), [2]))
case("empty batch", lambda: mp(torch.randn(0, 3, 4, 4, 4), [2]))
case("empty batch cl", lambda: mp(torch.randn(0, 3, 4, 4, 4).contiguous(memory_format=CL), [2]))
case("empty batch bool", lambda: mp(torch.zeros(0, 3, 4, 4, 4, dtype=torch.bool), [2]))
case("big", lambda: mp(torch.randn(2, 16, 9, 17, 18), [3], [2], [1], [1], False))
# refusals
z = torch.randn(2, 3, 4, 4, 4)
BAD = {
    "kernel 2 ints": ([2, 2], [], [0], [1], False), "kernel empty": ([], [], [0], [1], False),
    "stride 2 ints": ([2], [1, 1], [0], [1], False), "padding 2": ([2], [], [0, 0], [1], False),
    "padding empty": ([2], [], [], [1], False), "dilation 2": ([2], [], [0], [1, 1], False),
    "kernel 0": ([0], [], [0], [1], False), "kernel -1": ([-1], [1], [0], [1], False),
    "kernel -2": ([-2], [1], [0], [1], False), "kernel 0 dil 2": ([0], [1], [0], [2], False),
    "kernel 3 dil -1": ([3], [1], [0], [-1], False), "stride 0": ([2], [0], [0], [1], False),
    "stride -1": ([2], [-1], [0], [1], False), "dilation 0": ([2], [], [0], [0], False),
    "pad -1": ([2], [], [-1], [1], False), "pad 2 kernel 2": ([2], [], [2], [1], False),
    "pad 2 kernel 3 dil 3": ([3], [], [2], [3], False), "too small": ([5], [], [0], [1], False),
    "kernel overflow": ([2 ** 31], [1, 1], [0], [1], False),
    "stride overflow": ([2], [2 ** 31], [1, 1], [1], False),
    "dilation overflow": ([2], [], [0], [-2 ** 31 - 1], False),
}
for name, a in BAD.items():
    case(name, lambda: mp(z, *a))
case("3-D", lambda: mp(z[0, 0], [2]))
case("3-D kernel overflow", lambda: mp(z[0, 0], [2 ** 31]))
case("6-D", lambda: mp(z[None], [2]))
case("empty channels", lambda: mp(torch.randn(2, 0, 4, 4, 4), [2]))
case("empty channels 4-D", lambda: mp(torch.randn(0, 4, 4, 4), [2]))
case("empty depth", lambda: mp(torch.randn(2, 3, 0, 4, 4), [2]))
for dt in (torch.bool, torch.complex64, torch.uint16):
    case(f"{dt}", lambda: mp(z.to(dt), [2]))
    case(f"{dt} cl", lambda: mp(z.to(dt).contiguous(memory_format=CL), [2]))
case("int8 cl too big", lambda: mp(torch.ones(1, 3, 6, 6, 6, dtype=torch.int8).contiguous(
    memory_format=CL), [2]))
case("uint8 cl too big 4-D", lambda: mp(torch.ones(1, 3, 6, 6, 6, dtype=torch.uint8).contiguous(
    memory_format=CL)[0], [2]))
case("int8 cl fits", lambda: mp(torch.ones(1, 3, 5, 5, 5, dtype=torch.int8).contiguous(
    memory_format=CL), [2]))
case("int8 too big contiguous", lambda: mp(torch.ones(1, 3, 6, 6, 6, dtype=torch.int8), [2]))
# out=
def into(src, o, i):
    r = A.max_pool3d_with_indices.out(src, [2], [], [0], [1], False, out=o, indices=i)
    return r, o, i
zl = torch.empty(0, dtype=torch.long)
zcl = z.contiguous(memory_format=CL)
case("out= empty", lambda: into(z, torch.empty(0), zl.clone()))
case("out= cl", lambda: into(zcl, torch.empty(0), zl.clone()))
case("out= contiguous into cl", lambda: into(z, torch.empty(2, 3, 2, 2, 2).contiguous(
    memory_format=CL), torch.empty(2, 3, 2, 2, 2, dtype=torch.long)))
case("out= cl into contiguous", lambda: into(zcl, torch.empty(2, 3, 2, 2, 2),
                                             torch.empty(2, 3, 2, 2, 2, dtype=torch.long)))
case("out= 4-D transposed", lambda: into(z[0], torch.empty(3, 2, 2, 2).transpose(1, 3),
                                         torch.empty(3, 2, 2, 2, dtype=torch.long).transpose(1, 3)))
case("out= 4-D cl", lambda: into(zcl[0], torch.empty(3, 2, 2, 2).transpose(1, 3),
                                 torch.empty(3, 2, 2, 2, dtype=torch.long).transpose(1, 3)))
case("out= double", lambda: into(z, torch.empty(0, dtype=torch.double), zl.clone()))
case("out= int indices", lambda: into(z, torch.empty(0), torch.empty(0, dtype=torch.int)))
case("out= bf16", lambda: into(z.bfloat16(), torch.empty(0, dtype=torch.bfloat16), zl.clone()))
# the backward, through autograd
for dt in (torch.float32, torch.float64, torch.bfloat16, torch.float16):
    for layout in ("plain", "cl"):
        xr = torch.randint(-3, 4, (2, 3, 6, 7, 8)).to(dt)
        if layout == "cl":
            xr = xr.contiguous(memory_format=CL)
        xr.requires_grad_()
        for g, a in (("k3s1p1", ([3], [1], [1], [1], False)),
                     ("dil-ceil", ([2, 2, 3], [2, 3, 1], [1, 0, 1], [1, 2, 3], True))):
            k, s, p, d, c = a
            def grad():
                v, i = F.max_pool3d(xr, k, s or None, p, d, c, return_indices=True)
                gv = torch.randn(v.shape).to(dt)
                return v.grad_fn.name(), torch.autograd.grad(v, xr, gv)[0], v, i
            case(f"grad {dt} {layout} {g}", grad)
# the backward called directly: the gradient's layout, NaN gradients
xb = torch.randn(2, 3, 4, 5, 6)
xb_cl = xb.contiguous(memory_format=CL)
for name, xx in (("plain", xb), ("cl", xb_cl), ("transposed", xb.transpose(2, 4)), ("4-D", xb[0]),
                 ("4-D cl", xb_cl[0]), ("cl sliced", xb_cl[:, :, ::2])):
    v, i = mp(xx, [2], [1], [1], [1], False)
    for gname, go in (("", torch.randn(v.shape)),
                      (" grad cl", torch.randn(v.shape).contiguous(memory_format=CL)
                       if v.dim() == 5 else torch.randn((1,) + v.shape).contiguous(
                           memory_format=CL)[0])):
        for dt in (torch.float32, torch.bfloat16):
            gd = go.to(dt)
            gd[go > 1.5] = float("nan")
            case(f"backward {name}{gname} {dt}", lambda: A.max_pool3d_with_indices_backward(
                gd, xx.to(dt), [2], [1], [1], [1], False, i))
# the backward's checks (its output sizes are the gradient's) and the -1 index it skips
B = A.max_pool3d_with_indices_backward
vb, ib = mp(xb, [2])
gb = torch.randn(vb.shape)
BACK = {
    "go double": (gb.double(), xb, [2], [2], [0], [1], ib),
    "go double 3-D input": (gb.double(), xb[0, 0], [2], [2], [0], [1], ib),
    "go double kernel 2 ints": (gb.double(), xb, [2, 2], [2], [0], [1], ib),
    "3-D input": (gb, xb[0, 0], [2], [2], [0], [1], ib),
    "kernel overflow": (gb, xb, [2 ** 31], [2], [0], [1], ib),
    "kernel 0": (gb, xb, [0], [2], [0], [1], ib), "pad 3": (gb, xb, [2], [2], [3], [1], ib),
    "empty channels": (torch.randn(2, 0, 2, 2, 2), torch.randn(2, 0, 4, 5, 6), [2], [2], [0],
                       [1], ib[:, :0]),
    "empty batch": (torch.randn(0, 3, 2, 2, 3), torch.randn(0, 3, 4, 5, 6), [2], [2], [0], [1],
                    ib[:0]),
    "go 4-D": (gb[0], xb, [2], [2], [0], [1], ib), "go depth 3": (torch.randn(2, 3, 3, 2, 3), xb,
                                                                  [2], [2], [0], [1], ib),
    "go width 2": (torch.randn(2, 3, 2, 2, 2), xb, [2], [2], [0], [1], ib),
    "indices short": (gb, xb, [2], [2], [0], [1], ib[:, :, :1]),
    "indices int32": (gb, xb, [2], [2], [0], [1], ib.int()),
    "bool": (gb.bool(), xb.bool(), [2], [2], [0], [1], ib),
    "long": (gb.long(), xb.long(), [2], [2], [0], [1], ib),
    "long go cl": (gb.long().contiguous(memory_format=CL), xb.long(), [2], [2], [0], [1], ib),
    "kernel larger than input": (gb, xb, [5], [2], [0], [1], ib),
    "stride not the forward's": (gb, xb, [2], [1], [0], [1], ib),
    "index -1": (gb, xb, [2], [2], [0], [1], torch.where(gb > 0, ib, -1)),
    "index -1 bf16": (gb.bfloat16(), xb.bfloat16(), [2], [2], [0], [1], torch.full_like(ib, -1)),
    "go cl input plain": (gb.contiguous(memory_format=CL), xb, [2], [2], [0], [1], ib),
    "go plain input cl": (gb, xb_cl, [2], [2], [0], [1], ib),
}
for name, (g_, x_, k_, s_, p_, d_, i_) in BACK.items():
    case(f"backward {name}", lambda: B(g_, x_, k_, s_, p_, d_, False, i_))
x4 = torch.randn(3, 5, 6, 7, requires_grad=True)
case("grad 4-D", lambda: torch.autograd.grad(F.max_pool3d(x4, 2, 1, 1).sum(), x4)[0])
case("max_pool3d", lambda: F.max_pool3d(x, 3, 2, 1, ceil_mode=True))
print(json.dumps(out))
"""


results = sides.under_each_profile(PROGRAM)


def test_bits_agree_with_upstream(results):
    ours, up = results
    sides.assert_same(ours, up, at_least=270)
    assert up["control-no-tail"] != up["-inf c20 plain cl"]


def test_kernel_registered():
    assert sides.cpu_paths(["max_pool3d_with_indices"]) == {"max_pool3d_with_indices": "kernel"}
