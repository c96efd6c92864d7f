"""max_pool2d_with_indices_backward as a kernel, against upstream torch 2.13.0 in a separate
process and against the decomposition it replaced (torch/_decomp's scatter_add). Each input
position receives a sum of incoming gradients in output order, so agreement is bit for bit:
dtypes, strides (channels-last inputs keep their layout), overlapping windows, padding, dilation,
ceil mode, unbatched inputs, non-contiguous gradients and dtype errors. Where the decomposition
and upstream's native kernel differ (float16/bfloat16 with overlapping windows: the
decomposition accumulates in float32), the kernel is the decomposition's, as before. Control: a
kernel that assigns instead of adding is caught on overlapping windows."""

from __future__ import annotations

import pytest

from torchnative.testing.upstream import run_both

PROGRAM = r"""
import json, torch
A = torch.ops.aten
torch.manual_seed(0)
out = {}

def bits(t):
    return [str(t.dtype), list(t.shape), list(t.stride()),
            t.contiguous().view(torch.uint8).numpy().tobytes().hex()]

def case(name, fn):
    try:
        out[name] = bits(fn())
    except Exception as e:
        out[name] = ["error", type(e).__name__, str(e).split("\n")[0]]

def pool_back(x, k, s, p, d, cm, dt=None, grad=None):
    y, i = A.max_pool2d_with_indices(x, [k, k], [s, s], [p, p], [d, d], cm)
    g = torch.randn(y.shape) if grad is None else grad(y)
    if dt is not None:
        x, g = x.to(dt), g.to(dt)
    return A.max_pool2d_with_indices_backward(g, x, [k, k], [s, s], [p, p], [d, d], cm, i)

CFG = [((4, 3, 8, 8), 2, 2, 0, 1, False), ((2, 3, 7, 9), 3, 2, 1, 1, True),
       ((2, 5, 11, 6), 3, 1, 1, 1, False), ((1, 2, 9, 9), 2, 1, 0, 2, True),
       ((3, 6, 5), 3, 1, 1, 2, False)]
for n, (shape, k, s, p, d, cm) in enumerate(CFG):
    x = torch.randn(shape)
    for dt in ("float32", "float64"):
        case(f"{n}-{dt}", lambda: pool_back(x, k, s, p, d, cm, getattr(torch, dt)))
x = torch.randn(2, 3, 8, 8)
case("bf16", lambda: pool_back(x, 2, 2, 0, 1, False, torch.bfloat16))
case("f16", lambda: pool_back(x, 2, 2, 0, 1, False, torch.float16))
cl = torch.randn(2, 4, 6, 6).contiguous(memory_format=torch.channels_last)
case("dtype-mismatch", lambda: pool_back(
    x.double(), 2, 2, 0, 1, False, grad=lambda y: torch.randn(y.shape)))
case("channels-last", lambda: pool_back(cl, 2, 2, 0, 1, False))
case("channels-last-overlap", lambda: pool_back(cl, 3, 1, 1, 1, False))
case("grad-transposed", lambda: pool_back(
    x, 3, 2, 1, 1, False, grad=lambda y: torch.randn(y.shape[::-1]).permute(3, 2, 1, 0)))
case("ties", lambda: pool_back(torch.zeros(1, 1, 5, 5), 3, 1, 1, 1, False))
xr = torch.randn(2, 3, 9, 9, requires_grad=True)
case("autograd", lambda: torch.autograd.grad(
    torch.nn.functional.max_pool2d(xr, 3, 2, 1).pow(2).sum(), xr)[0])
def overlap(back):
    torch.manual_seed(5)
    x = torch.randn(2, 5, 11, 6)
    y, i = A.max_pool2d_with_indices(x, [3, 3], [1, 1], [1, 1], [1, 1], False)
    return back(torch.randn(y.shape), x, i)
case("overlap", lambda: overlap(lambda g, x, i: A.max_pool2d_with_indices_backward(
    g, x, [3, 3], [1, 1], [1, 1], [1, 1], False, i)))
# control: assignment instead of accumulation loses the overlapping windows' sums
case("control-assign", lambda: overlap(lambda g, x, i: torch.zeros(10, 66).scatter(
    1, i.reshape(10, -1), g.reshape(10, -1)).reshape(x.shape)))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results():
    return run_both(PROGRAM)


def test_bits_agree_with_upstream(results):
    ours, up = results
    assert set(ours) == set(up) and len(up) >= 15
    for name in up:
        if not name.startswith("control"):  # scatter with repeated indices: any one may win
            assert ours[name] == up[name], name


def test_control_is_caught(results):
    _, up = results
    assert up["control-assign"][3] != up["overlap"][3]


def _decomposition_equal(args):
    import torch
    from torch._decomp.decompositions import max_pool2d_with_indices_backward as decomposition

    ours, ref = torch.ops.aten.max_pool2d_with_indices_backward(*args), decomposition(*args)
    assert ours.dtype == ref.dtype and ours.shape == ref.shape and ours.stride() == ref.stride()
    return torch.equal(ours.contiguous().view(torch.uint8), ref.contiguous().view(torch.uint8))


@pytest.mark.parametrize("dt", ["float32", "float64", "bfloat16", "float16"])
def test_same_bits_as_the_decomposition_it_replaced(dt):
    """Including reduced precision with overlapping windows, where the decomposition's float32
    accumulation is not upstream's native kernel."""
    import torch

    A = torch.ops.aten
    torch.manual_seed(2)
    dtype = getattr(torch, dt)
    for shape, k, s, p, d, cm in [((2, 3, 10, 7), 3, 1, 1, 1, False),
                                  ((3, 9, 9), 4, 2, 2, 1, True), ((2, 2, 8, 8), 2, 2, 0, 1, False)]:
        x = torch.randn(shape) * 100
        y, i = A.max_pool2d_with_indices(x, [k, k], [s, s], [p, p], [d, d], cm)
        g = torch.randn(y.shape) * 100
        args = (g.to(dtype), x.to(dtype), [k, k], [s, s], [p, p], [d, d], cm, i)
        assert _decomposition_equal(args)
        cl = (g.to(dtype), x.to(dtype).contiguous(memory_format=torch.channels_last)) \
            if len(shape) == 4 else None
        if cl is not None:
            assert _decomposition_equal(cl + args[2:])


def test_unusual_arguments_still_take_the_decomposition():
    """A 5-d input is outside what the kernel computes itself: the decomposition's own result
    (or error) comes back, as before."""
    import torch

    A = torch.ops.aten
    x = torch.randn(2, 1, 2, 6, 6)
    g = torch.randn(2, 1, 2, 3, 3)
    i = torch.zeros(2, 1, 2, 3, 3, dtype=torch.long)
    args = (g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, i)
    from torch._decomp.decompositions import max_pool2d_with_indices_backward as decomposition

    try:
        want = decomposition(*args)
    except Exception as e:  # noqa: BLE001 - the decomposition's own error is the reference
        with pytest.raises(type(e)):
            A.max_pool2d_with_indices_backward(*args)
    else:
        assert torch.equal(A.max_pool2d_with_indices_backward(*args), want)


def test_out_of_range_index_is_the_decompositions_error():
    """Upstream's native kernel does not check the indices (it writes wherever they point); the
    decomposition's scatter_add refused, and so does the kernel, with its message."""
    import torch

    A = torch.ops.aten
    x = torch.randn(2, 3, 8, 8)
    y, i = A.max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    for bad_value in (64, -1):
        bad = i.clone()
        bad[0, 0, 0, 0] = bad_value
        with pytest.raises(RuntimeError, match=f"index {bad_value} is out of bounds for "
                           "dimension 1 with size 64"):
            A.max_pool2d_with_indices_backward(torch.ones(y.shape), x, [2, 2], [2, 2], [0, 0],
                                               [1, 1], False, bad)
