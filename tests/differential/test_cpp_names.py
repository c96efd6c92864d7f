"""One table of the C++ names upstream prints for a dtype (csrc/platform/cpp_names.py), checked
against upstream's own messages: the copies it replaced had drifted (int32 printed as
``int32_t`` by Scalar::to in the matmul kernels, uint16/uint64 TypeMeta names spelled two ways,
one table missing uint16 altogether)."""

from __future__ import annotations

import pytest

from torchnative.testing.upstream import available, run_both

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

# Every message comes from a different kernel family, so each path that prints a name is covered.
PROGRAM = r'''
import json
import torch

def msg(f):
    try:
        f()
    except Exception as e:
        return str(e).splitlines()[0]
    return "no error"

z = lambda dt, n=2: torch.zeros(n, n, dtype=dt)
out = {}
ints = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
too_big = {torch.uint8: 300, torch.int8: 300, torch.int16: 2 ** 20, torch.int32: 2 ** 40}
for dt, big in too_big.items():
    out[f"addmm beta {dt}"] = msg(lambda: torch.addmm(z(dt), z(dt), z(dt), beta=big))
    out[f"add alpha {dt}"] = msg(lambda: torch.add(z(dt), z(dt), alpha=big))
    out[f"index_fill {dt}"] = msg(lambda: z(dt).index_fill(0, torch.tensor([0]), big))
for dt in ints + [torch.uint16, torch.uint32, torch.uint64, torch.float16, torch.bfloat16,
                  torch.float32, torch.float64, torch.complex64, torch.complex128]:
    out[f"masked_fill mask {dt}"] = msg(lambda: torch.zeros(2).masked_fill(torch.zeros(2, dtype=dt), 1))
    out[f"argmax out {dt}"] = msg(lambda: torch.argmax(torch.zeros(2), out=torch.zeros((), dtype=dt)))
out["addmm beta bfloat16"] = msg(lambda: torch.addmm(z(torch.bfloat16), z(torch.bfloat16), z(torch.bfloat16), beta=1e39))
for dt in (torch.uint8, torch.int8, torch.int16):
    out[f"random_ bounds {dt}"] = msg(lambda: torch.zeros(3, dtype=dt).random_(0, 2 ** 20))
print(json.dumps(out))
'''


def test_dtype_names_in_messages_agree_with_upstream():
    ours, theirs = run_both(PROGRAM)
    assert ours.keys() == theirs.keys()
    # the program reaches the messages it is meant to (an error naming a C++ type)
    assert sum("without overflow" in m for m in theirs.values()) >= 10
    assert sum("short unsigned int" in m for m in theirs.values()) >= 2
    wrong = {k: (ours[k], theirs[k]) for k in theirs if ours[k] != theirs[k]}
    assert wrong == {}
