"""fill_ with a Scalar (and full, full_like, which fill through it) converts the value checked,
as upstream's Scalar conversion does: a value the dtype cannot hold raises "value cannot be
converted to type ... without overflow" (integers, float16/bfloat16/float/complex, NaN and inf
into integers) -- but one element of float16/bfloat16 is written unchecked (inf) and complex32
is checked against complex<float> for more than one element, as upstream's fills do; fill_ with
a 0-dim tensor copies it with the cast rules, unchecked. Compared
with upstream, value for value and message for message."""

from __future__ import annotations

import json

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import torch, json
def tr(f):
    try: return str(f().tolist())
    except Exception as e: return type(e).__name__+': '+str(e)
out = [tr(lambda: torch.empty(3, dtype=torch.uint8).fill_(300)), tr(lambda: torch.empty(3, dtype=torch.uint8).fill_(-1)),
 tr(lambda: torch.empty(3, dtype=torch.int8).fill_(255)), tr(lambda: torch.empty(3).fill_(1+2j)), tr(lambda: torch.empty(3).fill_(1+0j)),
 tr(lambda: torch.empty(3, dtype=torch.float16).fill_(1e6)), tr(lambda: torch.empty(3, dtype=torch.bool).fill_(5)),
 tr(lambda: torch.empty(3).fill_(torch.tensor(300))), tr(lambda: torch.empty(3, dtype=torch.uint8).fill_(torch.tensor(300))),
 tr(lambda: torch.full((2,), 300, dtype=torch.uint8)), tr(lambda: torch.full_like(torch.zeros(2, dtype=torch.int8), 200)),
 tr(lambda: torch.empty(3, dtype=torch.int32).fill_(float('inf'))), tr(lambda: torch.empty(3, dtype=torch.int32).fill_(2.5e10)),
 tr(lambda: torch.empty(2).fill_(float('nan'))), tr(lambda: torch.empty(2, dtype=torch.float16).fill_(float('inf'))),
 tr(lambda: torch.empty(2, dtype=torch.bfloat16).fill_(1e39)), tr(lambda: torch.empty(2).fill_(1e39)),
 tr(lambda: torch.full((2,), 2**63 - 1)), tr(lambda: torch.empty(2, dtype=torch.int64).fill_(True)),
 tr(lambda: torch.empty(2, dtype=torch.complex64).fill_(1e39)), tr(lambda: torch.empty(2, dtype=torch.uint8).fill_(255.5)),
 tr(lambda: torch.empty(2, dtype=torch.uint8).fill_(-0.5))]
# one element of a 16-bit float is written unchecked; complex32 is checked against Half for one
# element and against complex<float> for more
import warnings
warnings.simplefilter("ignore")
for n in (1, 3):
    for dt in (torch.float16, torch.bfloat16, torch.complex32):
        for v in (1e10, -1e39, 70000, 1e300):
            out.append(tr(lambda: torch.zeros(n, dtype=dt).fill_(v).to(torch.complex64 if dt.is_complex else torch.float32)))
            out.append(tr(lambda: torch.full((n,), v, dtype=dt).to(torch.complex64 if dt.is_complex else torch.float32)))
print(json.dumps(out))
'''


def test_fill_conversions_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    # the program's own cases on upstream: 300 into uint8 overflows, a tensor's 300 wraps to 44
    assert "without overflow" in theirs[0] and theirs[8] == "[44, 44, 44]"
    assert ours == theirs, json.dumps([(o, t) for o, t in zip(ours, theirs) if o != t])
