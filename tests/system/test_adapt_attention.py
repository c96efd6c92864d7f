"""Scaled dot-product attention's gradient with grouped key/value heads (``enable_gqa=True``, as
transformers' SDPA path runs SmolLM2's 9 query / 3 key-value heads), with and without
``is_causal`` and with a float mask, compared with upstream in separate processes at the
tolerance derived from upstream's own float32-vs-float64 error."""

from __future__ import annotations

import json

import numpy as np
import pytest

from torchnative.testing import upstream

needs_upstream = pytest.mark.skipif(not upstream.available(), reason="needs .venv-upstream")

PROGRAM = r"""
import json, sys
import numpy as np
import torch
import torch.nn.functional as F

dtype = getattr(torch, sys.argv[1] if len(sys.argv) > 1 else "float32")
CASES = [("h4_kv2", 4, 2, False, False), ("h4_kv2_causal", 4, 2, True, False),
         ("h6_kv1_causal", 6, 1, True, False), ("h9_kv3_mask", 9, 3, False, True)]
out = {}
for name, h, hk, causal, masked in CASES:
    g = np.random.default_rng(len(name) * 7 + h)
    q = torch.tensor(g.standard_normal((2, h, 5, 8)), dtype=dtype, requires_grad=True)
    k = torch.tensor(g.standard_normal((2, hk, 6, 8)), dtype=dtype, requires_grad=True)
    v = torch.tensor(g.standard_normal((2, hk, 6, 8)), dtype=dtype, requires_grad=True)
    w = torch.tensor(g.standard_normal((2, h, 5, 8)), dtype=dtype)
    mask = torch.tensor(g.standard_normal((5, 6)), dtype=dtype) if masked else None
    o = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal, enable_gqa=True)
    (o * w).sum().backward()
    out[name] = {"groups": h // hk, "out": o.detach().double().tolist(), "dq": q.grad.double().tolist(),
                 "dk": k.grad.double().tolist(), "dv": v.grad.double().tolist()}
    # a control: each key head's gradient from the first query head of its group only
    kr = k.detach().repeat_interleave(h // hk, dim=1).requires_grad_(True)
    o2 = F.scaled_dot_product_attention(q.detach(), kr, v.detach().repeat_interleave(h // hk, dim=1),
                                        attn_mask=mask, is_causal=causal)
    (o2 * w).sum().backward()
    out[name]["dk_first_of_group"] = kr.grad[:, :: h // hk].double().tolist()
print(json.dumps(out))
"""


def _run(side, *args):
    import subprocess

    if side == "upstream":
        cmd = upstream.code_command(PROGRAM)
        env = upstream.upstream_env()
    else:
        cmd, env = [upstream.ours_python(), "-c", PROGRAM], None
    proc = subprocess.run([*cmd, *args], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _scaled(a, b):
    """|a - b| relative to b's largest magnitude: attention's gradients come out of cancellations
    (a causal first row's query gradient is zero up to rounding), so errors scale with the terms
    that made a value, not with the value."""
    return np.abs(a - b) / max(float(np.abs(b).max()), 1e-30)


@needs_upstream
def test_gqa_attention_gradients_agree_with_upstream():
    ours, up32, up64 = _run("ours"), _run("upstream"), _run("upstream", "float64")
    assert sorted(ours) == sorted(up32)
    keys = ("out", "dq", "dk", "dv")
    own = np.concatenate([_scaled(np.asarray(up32[c][k]), np.asarray(up64[c][k])).ravel()
                          for c in up32 for k in keys])
    tol = max(float(np.quantile(own, 0.9)), 4 * float(np.finfo(np.float32).eps))
    for case in up32:
        for key in keys:
            err = _scaled(np.asarray(ours[case][key]), np.asarray(up32[case][key]))
            assert (err <= tol).all(), (case, key, float(err.max()), tol)
        # a control: key gradients from only the first query head of each group are caught
        assert up32[case]["groups"] > 1
        part = _scaled(np.asarray(up32[case]["dk_first_of_group"]), np.asarray(up32[case]["dk"]))
        assert (part > tol).any(), case
