"""Checks of the torchvision kernels against references that are not ours, run on upstream torch
(plain torch code): torchvision's own pure-Python RoIAlign, conv2d for deform_conv2d with zero
offsets and a unit mask, and float64 gradcheck of every backward operator through torchvision's
own autograd registrations. Prints one JSON line: check -> true/false or the max difference."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "src"))
import torchnative.ecosystem  # noqa: E402

torchnative.ecosystem.install()
import torch  # noqa: E402
from torchvision import ops  # noqa: E402
from torchvision.ops.roi_align import _roi_align as _lazily_compiled  # noqa: E402

# the Python function itself, eagerly: torchvision compiles it on first call, and inductor's C++
# build (its compiler, its cache, its choice of vector ISA) is no part of what is checked here
_roi_align = _lazily_compiled.__wrapped__

torch.manual_seed(0)
d = torch.float64
out = {}
x = torch.randn(2, 3, 9, 10, dtype=d)
# inside the image: torchvision's Python version clamps samples beyond the border where its C++
# kernel (which ours follows) drops them, so the two agree only inside
b = torch.rand(5, 4, dtype=d) * 4
b[:, 2:] += b[:, :2] + 0.5
r = torch.cat([torch.tensor([[0.], [1.], [0.], [1.], [1.]], dtype=d), b], 1)
for aligned in (False, True):
    for sr in (-1, 2):
        got = ops.roi_align(x, r, (3, 4), 0.8, sr, aligned)
        ref = _roi_align(x, r, 0.8, 3, 4, sr, aligned)
        out[f"roi_align_vs_torchvision_python[aligned={aligned},sampling={sr}]"] = (got - ref).abs().max().item()
w = torch.randn(4, 3, 3, 3, dtype=d)
bias = torch.randn(4, dtype=d)
off = torch.zeros(2, 18, 5, 5, dtype=d)
got = ops.deform_conv2d(x, off, w, bias, stride=2, padding=1, mask=torch.ones(2, 9, 5, 5, dtype=d))
out["deform_conv2d_zero_offset_vs_conv2d"] = (got - torch.nn.functional.conv2d(x, w, bias, 2, 1)).abs().max().item()

xs = torch.randn(1, 2, 6, 7, dtype=d, requires_grad=True)
xps = torch.randn(1, 6, 6, 7, dtype=d, requires_grad=True)
rs = torch.tensor([[0, 0.5, 1.2, 4.3, 5.1], [0, 2.2, 0.3, 6.0, 3.7]], dtype=d)
def gc(fn, inputs):
    return torch.autograd.gradcheck(fn, inputs, fast_mode=True)


out["gradcheck_roi_align"] = gc(lambda t: ops.roi_align(t, rs, (2, 3), 0.9, 2, True), (xs,))
out["gradcheck_roi_align_adaptive"] = gc(lambda t: ops.roi_align(t, rs, (2, 2), 1.0, -1, False), (xs,))
out["gradcheck_roi_pool"] = gc(lambda t: ops.roi_pool(t, rs, (2, 3), 0.9), (xs,))
out["gradcheck_ps_roi_align"] = gc(lambda t: ops.ps_roi_align(t, rs, (1, 3), 0.9, 2), (xps,))
out["gradcheck_ps_roi_pool"] = gc(lambda t: ops.ps_roi_pool(t, rs, (1, 3), 0.9), (xps,))
inp = torch.randn(1, 2, 5, 5, dtype=d, requires_grad=True)
wd = torch.randn(2, 1, 3, 3, dtype=d, requires_grad=True)
od = (torch.randn(1, 2 * 2 * 9, 3, 3, dtype=d) * 1.3).requires_grad_()
md = torch.rand(1, 2 * 9, 3, 3, dtype=d, requires_grad=True)
bd = torch.randn(2, dtype=d, requires_grad=True)
out["gradcheck_deform_conv2d"] = gc(
    lambda i, ww, o, m, bb: ops.deform_conv2d(i, o, ww, bb, stride=2, padding=1, mask=m), (inp, wd, od, md, bd))
print(json.dumps(out))
