"""ATen's float32 precision settings against upstream torch 2.13.0, each in its own process: the
new API's table (``torch.backends[.<backend>[.<op>]].fp32_precision``, its torch._C getter and
setter), the legacy switches kept consistent with it (``torch.set_float32_matmul_precision``,
``torch.backends.cuda.matmul.allow_tf32``, ``torch.backends.cudnn.allow_tf32``) and their mix
errors, over a seeded random sequence of calls, every outcome (value, error, warning) compared."""

from __future__ import annotations

import json

import pytest

from torchnative.testing.upstream import available, run_both, run_json_ours

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

PROGRAM = r'''
import json, random, warnings, torch
C = torch._C
B = torch.backends
BACKENDS = ["generic", "mkldnn", "cuda", "bogus"]
OPS = ["all", "matmul", "conv", "rnn", "bogus"]
PRECISIONS = ["none", "ieee", "tf32", "bf16", "x"]

def outcome(f):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            v = [repr(f())]
        except Exception as e:
            v = [type(e).__name__, str(e)]
    # (upstream's C++ warnings name their source line; ours do not)
    return v + [str(x.message).split(" (Triggered internally")[0] for x in w]

rng = random.Random(SEED)
calls = [
    lambda: C._get_fp32_precision_getter(rng.choice(BACKENDS), rng.choice(OPS)),
    lambda: C._set_fp32_precision_setter(rng.choice(BACKENDS), rng.choice(OPS), rng.choice(PRECISIONS)),
    lambda: C._set_float32_matmul_precision(rng.choice(["highest", "high", "medium", "HIGH", 1])),
    lambda: torch.get_float32_matmul_precision(),
    lambda: C._set_cublas_allow_tf32(rng.choice([True, False, 1])),
    lambda: C._get_cublas_allow_tf32(),
    lambda: C._set_cudnn_allow_tf32(rng.choice([True, False, None])),
    lambda: C._get_cudnn_allow_tf32(),
    lambda: setattr(B.cuda.matmul, "allow_tf32", rng.choice([True, False])),
    lambda: B.cuda.matmul.allow_tf32,
    lambda: B.cudnn.allow_tf32,
    lambda: setattr(B, "fp32_precision", rng.choice(PRECISIONS[:4])),
    lambda: (B.fp32_precision, B.mkldnn.fp32_precision, B.mkldnn.matmul.fp32_precision,
             B.mkldnn.conv.fp32_precision, B.mkldnn.rnn.fp32_precision, B.cuda.matmul.fp32_precision,
             B.cudnn.fp32_precision, B.cudnn.conv.fp32_precision, B.cudnn.rnn.fp32_precision),
    lambda: setattr(B.cudnn.conv, "fp32_precision", rng.choice(PRECISIONS)),
    lambda: setattr(B.mkldnn, "fp32_precision", rng.choice(PRECISIONS)),
]
out = {"defaults": outcome(calls[12]), "legacy defaults": outcome(
    lambda: (torch.get_float32_matmul_precision(), C._get_cublas_allow_tf32(), C._get_cudnn_allow_tf32(),
             C._get_onednn_allow_tf32()))}
with B.flags(fp32_precision="tf32"):
    out["inside flags"] = outcome(calls[12])
out["after flags"] = outcome(calls[12])
for i, step in enumerate((  # each legacy getter against a state only the new API expresses
        lambda: C._set_float32_matmul_precision("high"), lambda: B.cuda.matmul.allow_tf32,
        lambda: setattr(B.cuda.matmul, "fp32_precision", "ieee"), lambda: B.cuda.matmul.allow_tf32,
        lambda: torch.get_float32_matmul_precision(), lambda: setattr(B.mkldnn.matmul, "fp32_precision", "bf16"),
        lambda: torch.get_float32_matmul_precision(), lambda: setattr(B.cudnn.rnn, "fp32_precision", "ieee"),
        lambda: B.cudnn.allow_tf32, lambda: setattr(B.cudnn, "allow_tf32", False), lambda: B.cudnn.allow_tf32,
        lambda: setattr(B.cudnn.rnn, "fp32_precision", "none"), lambda: setattr(B, "fp32_precision", "tf32"),
        calls[12], lambda: B.cudnn.allow_tf32, lambda: torch.set_float32_matmul_precision("highest"),
        calls[12])):
    out[f"scripted {i}"] = outcome(step)
for i in range(400):
    k = rng.randrange(len(calls))
    out[f"{i} {k}"] = outcome(calls[k])
for args in ((1, "all"), ("cuda",), ("cuda", "all", 3)):
    out[f"bad {args}"] = outcome(lambda: C._set_fp32_precision_setter(*args))
print(json.dumps(out))
'''


def _program(seed: int, prelude: str = "") -> str:
    return prelude + PROGRAM.replace("SEED", str(seed))


@pytest.mark.parametrize("seed", [0, 1])
def test_fp32_precision_as_upstream(seed):
    ours, theirs = run_both(_program(seed))
    # the sequence reaches what it tests: each mix error, a refused pair, an inherited value
    text = json.dumps(theirs)
    for needle in ("without a specific backend name", "allow_tf32_new is enabled for cuBlas",
                   "cuDNN conv and cuDNN RNN have different", "Invalid (backend, op) pair",
                   "does not support precision", "Unknown precision: x"):
        assert needle in text, needle
    different = {k: (ours.get(k), v) for k, v in theirs.items() if ours.get(k) != v}
    assert not different
    assert ours.keys() == theirs.keys()


def test_a_wrong_rule_is_caught():
    # control: cuDNN's conv/rnn without their tf32 default, or a set value that does not win
    # over an inherited one, changes what the sequence sees
    theirs = run_both(_program(0))[1]
    for prelude in ("from torchnative.csrc.surface import fp32_precision as P\nP._DEFAULTS.clear()\n",
                    "from torchnative.csrc.surface import fp32_precision as P\n"
                    "P._set = type('D', (dict,), {'get': lambda s, k, d=None: d})()\n"):
        assert run_json_ours(_program(0, prelude)) != theirs
