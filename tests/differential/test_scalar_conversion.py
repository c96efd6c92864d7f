"""``c10::Scalar::to<T>()`` has one copy (csrc/kernels/support/scalar.py), checked against upstream
at the edges of ``c10::overflows`` through every kernel family that converts a scalar argument.
The copies it replaced had drifted: the matmul kernels refused a negative alpha for uint8 (upstream
wraps it), let a float alpha just above int32's maximum through, and never checked float16. A
complex number with an imaginary part fits no real type: the kernels that read a scalar as their
real type refuse it (they took its real part), and one without reads as its real part, silently
(``fill_`` warned)."""

from __future__ import annotations

import pytest

import sides
from torchnative.testing.upstream import available

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

PROGRAM = r'''
def res(f):
    return outcome(f, bits=True)

z = lambda dt, n=2: torch.ones(n, n, dtype=dt)
edges = {
    torch.uint8: [-1, -255, -256, 255, 256],
    torch.int8: [-128, -129, 127, 128],
    torch.int32: [2 ** 31 - 1, 2 ** 31, 2147483647.5, -2147483648.5, float("nan"), float("inf")],
    torch.int64: [2 ** 63 - 1, 9.3e18, -9.3e18],
    torch.float16: [65504.0, 65519.0, 65520.0, 1e5, float("inf"), float("nan"), 2 ** 17],
    torch.bfloat16: [3.0e38, 3.4e38, 1e39, float("-inf")],
    torch.float32: [3.4e38, 3.5e38, 1e300, -float("inf"), float("nan"), -0.01],
    torch.float64: [1.7e308, -float("inf"), float("nan"), -0.01],
    torch.complex64: [1e39, complex(1, 2), complex(3e38, 0), complex(0, 1e39), complex(float("inf"), 1e39)],
}
out = {}
for dt, values in edges.items():
    for v in values:
        key = f"{dt} {v!r}"
        out[f"addmm beta {key}"] = res(lambda: torch.addmm(z(dt), z(dt), z(dt), beta=v))
        out[f"addmm alpha {key}"] = res(lambda: torch.addmm(z(dt), z(dt), z(dt), alpha=v))
        out[f"index_fill {key}"] = res(lambda: z(dt).index_fill(0, torch.tensor([0]), v))
        out[f"scatter {key}"] = res(lambda: z(dt).scatter(0, torch.tensor([[0, 1]]), v))
        out[f"index_add alpha {key}"] = res(lambda: z(dt).index_add(0, torch.tensor([1]), z(dt)[:1], alpha=v))
        # the optimizers' in-place forms (their dense lanes read a float scalar on a short path)
        out[f"add_ alpha {key}"] = res(lambda: z(dt).add_(z(dt) * 3, alpha=v))
        out[f"lerp_ {key}"] = res(lambda: z(dt).lerp_(z(dt) * 3, v))
        out[f"addcmul_ value {key}"] = res(lambda: z(dt).addcmul_(z(dt) * 3, z(dt), value=v))
for v in (complex(1, 2), complex(3, 0)):
    out[f"index_fill float32 {v!r}"] = res(lambda: z(torch.float32).index_fill(0, torch.tensor([0]), v))
x = torch.tensor([-1.0, 2.0])
F = torch.nn.functional
real_reads = {
    "clamp": lambda c: x.clamp(c), "clamp max": lambda c: x.clamp(max=c),
    "clamp both": lambda c: x.clamp(c, 3), "clamp nan": lambda c: x.clamp(c, float("nan")),
    "clamp_": lambda c: x.clone().clamp_(c), "clamp_min": lambda c: x.clamp_min(c),
    "lerp": lambda c: x.lerp(x, c), "lerp_": lambda c: x.clone().lerp_(x, c),
    "addcmul": lambda c: x.addcmul(x, x, value=c), "addcdiv": lambda c: x.addcdiv(x, x, value=c),
    "addcmul_": lambda c: x.clone().addcmul_(x, x, value=c),
    "elu": lambda c: F.elu(x, c), "leaky_relu": lambda c: F.leaky_relu(x, c),
    "softplus": lambda c: F.softplus(x, c), "threshold": lambda c: F.threshold(x, c, 1.0),
    "threshold value": lambda c: F.threshold(x, 0.5, c), "hardtanh": lambda c: F.hardtanh(x, c),
    "add_ alpha": lambda c: x.clone().add_(x, alpha=c), "fill_": lambda c: x.clone().fill_(c),
    "masked_fill": lambda c: x.masked_fill(x > 0, c), "pow": lambda c: x.pow(c),
    "full": lambda c: torch.full((2,), c, dtype=torch.float32),
}
with warnings.catch_warnings():
    warnings.simplefilter("error")  # a warning upstream does not give is an error here
    for v in (complex(0.5, 1), complex(0.5, 0), complex(0.5, -0.0)):
        for name, f in real_reads.items():
            out[f"{name} float32 {v!r}"] = res(lambda: f(v))
print(json.dumps(out))
'''


def test_scalar_conversion_agrees_with_upstream_at_the_overflow_edges():
    ours, theirs = sides.on_both(PROGRAM)
    assert ours.keys() == theirs.keys()
    # the edges are reached: some conversions refuse, some wrap or saturate to a value
    assert sum("without overflow" in r.get("message", "") for r in theirs.values()) >= 20
    assert sum("hex" in r for r in theirs.values()) >= 40
    for name in ("clamp", "lerp", "elu", "leaky_relu", "softplus", "addcmul_"):
        assert "without overflow" in theirs[f"{name} float32 (0.5+1j)"].get("message", "")
        assert "hex" in theirs[f"{name} float32 (0.5+0j)"]
    wrong = sides.differing(ours, theirs)
    assert wrong == {}
