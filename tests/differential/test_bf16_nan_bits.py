"""bfloat16 NaN bit patterns from conversions, against upstream bit for bit: c10's scalar
constructor stores 0x7FC0, the AVX2/AVX512 copy kernel's vectorized converter 0xFFFF, and which
element meets which depends on the loop (kernels/simd_lanes.py, copy_nans). NaN's sign and
payload are observable (signbit, copysign, a view as int16, saved bytes). Run under the CPU capability this
machine picks and under every other one it can run (DEFAULT converts element by element)."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r"""
import json, torch, numpy as np
out = {}
nan = float("nan")

def bits(t):
    return (t.contiguous().view(torch.int16).to(torch.int32) & 0xFFFF).reshape(-1).tolist()

for src in (torch.float32, torch.float64):
    s = str(src).split(".")[1]
    for n in list(range(1, 40)) + [64, 100, 129]:
        out[f"{s} to n={n}"] = bits(torch.full((n,), nan, dtype=src).to(torch.bfloat16))
    out[f"{s} 0-d"] = bits(torch.tensor(nan, dtype=src).to(torch.bfloat16))
    out[f"{s} 2-d"] = bits(torch.full((3, 20), nan, dtype=src).to(torch.bfloat16))
    out[f"{s} transposed dense"] = bits(torch.full((20, 3), nan, dtype=src).t().to(torch.bfloat16))
    out[f"{s} strided rows"] = bits(torch.full((3, 40), nan, dtype=src)[:, :36].to(torch.bfloat16))
    out[f"{s} every other"] = bits(torch.full((40,), nan, dtype=src)[::2].to(torch.bfloat16))
    out[f"{s} expanded rows"] = bits(torch.full((1, 37), nan, dtype=src).expand(3, 37).to(torch.bfloat16))
    out[f"{s} offset slice"] = bits(torch.full((50,), nan, dtype=src)[3:].bfloat16())
    out[f"{s} channels_last"] = bits(torch.full((5, 3, 4, 4), nan, dtype=src)
                                     .to(memory_format=torch.channels_last).to(torch.bfloat16))
    d = torch.empty(40, 2, dtype=torch.bfloat16)[:, 0]
    d.copy_(torch.full((40,), nan, dtype=src))
    out[f"{s} copy_ into strided"] = bits(d)
    for shape, part in (((3, 37), (37,)), ((37,), ()), ((3, 37), (3, 1)), ((2, 3, 37), (3, 37))):
        d = torch.empty(shape, dtype=torch.bfloat16)
        d.copy_(torch.full(part, nan, dtype=src))
        out[f"{s} copy_ {part} into {shape}"] = bits(d)
    d = torch.empty(3, 37, dtype=torch.bfloat16)
    d.copy_(torch.full((37, 3), nan, dtype=src).t())
    out[f"{s} copy_ transposed source"] = bits(d)
    for threads in (1, 3):
        torch.set_num_threads(threads)
        t = torch.full((100000,), nan, dtype=src)
        out[f"{s} threads={threads}"] = bits(t.to(torch.bfloat16))
    torch.set_num_threads(1)
    mixed = torch.tensor([1.0, nan, -nan, 2.0] * 9, dtype=src)
    out[f"{s} mixed"] = bits(mixed.to(torch.bfloat16))
out["tensor of a list"] = bits(torch.tensor([nan] * 17, dtype=torch.bfloat16))
out["as_tensor of a list"] = bits(torch.as_tensor([nan] * 17, dtype=torch.bfloat16))
out["tensor of an array"] = bits(torch.tensor(np.full(17, np.nan), dtype=torch.bfloat16))
out["full"] = bits(torch.full((17,), nan, dtype=torch.bfloat16))
out["fill_"] = bits(torch.empty(17, dtype=torch.bfloat16).fill_(nan))
out["signbit"] = torch.full((40,), nan, dtype=torch.float64).to(torch.bfloat16).signbit().tolist()
out["capability"] = torch.backends.cpu.get_cpu_capability()
print(json.dumps(out))
"""

_VECTOR, _SCALAR = 0xFFFF, 0x7FC0


def _capabilities() -> list:
    """None (what this machine picks), then each capability upstream can run here."""
    from torchnative.csrc.platform.cpu_capability import FLAGS, _X86

    caps = [None, "default"]
    if _X86 and {"avx2", "fma"} <= FLAGS:
        caps.append("avx2")
    if _X86 and {"avx512vl", "avx512bw", "avx512dq", "fma"} <= FLAGS:
        caps.append("avx512")
    return caps


@pytest.mark.parametrize("capability", _capabilities(), ids=lambda c: c or "detected")
def test_bf16_nan_bits_agree_with_upstream(capability):
    if not upstream.available():
        upstream.missing("the upstream comparison environment")
    env = {"ATEN_CPU_CAPABILITY": capability} if capability else {}
    ours, up = upstream.run_both(PROGRAM, env=env)
    assert ours["capability"] == up["capability"]
    differ = [k for k in up if ours[k] != up[k]]
    assert not differ, f"{len(differ)} cases differ, first {differ[:5]}: " \
                       f"ours {ours[differ[0]][:40]}, upstream {up[differ[0]][:40]}"
    # controls: the cases tell the two converters apart, so agreeing is not trivial
    if up["capability"] == "DEFAULT":
        assert set(up["float32 to n=17"]) == {_SCALAR}  # element by element, c10's pattern
    else:
        assert set(up["float32 to n=17"]) == {_VECTOR}
        assert set(up["float64 to n=17"]) == {_VECTOR, _SCALAR}  # a tail after 16
        assert up["float64 threads=3"] != up["float64 threads=1"]  # the threads' chunks
    assert set(up["tensor of a list"]) == {_SCALAR}
