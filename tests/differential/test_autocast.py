"""torch.autocast on CPU against upstream torch 2.13.0, in separate processes.

- The policy table (which operators autocast and how) is upstream's: regenerated from upstream's
  dispatcher by tools/gen_autocast_table.py and compared with the committed one.
- Behaviour, exactly: result dtypes of each policy (lower precision, fp32, promote) in bfloat16
  and float16 regions, float64 left alone, nesting, ``enabled=False``, ``_DisableAutocast``,
  composites whose inner products autocast, the prioritize error, the deprecated spellings'
  warnings, the graph (how many casts autograd records: the cast cache makes a weight used twice
  one ToCopyBackward0), a write to a weight between two regions reaching the second (the cache
  is cleared on exit), gradient dtypes after a training step.
- Values: bfloat16/float16 products within one rounding of the 16-bit result of upstream's
  (upstream rounds its float32 accumulation once; ours accumulates in float32 in another order
  first), float32 results of fp32-policy operators at 1e-6 relative.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from torchnative.testing import upstream

pytestmark = pytest.mark.skipif(not upstream.available(), reason="upstream torch env missing")

PROGRAM = r'''
import json, warnings
import torch
import torch.nn as nn
import torch.nn.functional as F

out, vals = {}, {}
def dt(t):
    return str(t.dtype).split(".")[1]
def err(f):
    try:
        r = f()
        return ["ok", dt(r)] if isinstance(r, torch.Tensor) else ["ok"]
    except Exception as e:
        return [type(e).__name__, str(e).split("\n")[0]]
def keep(name, t):
    vals[name] = t.detach().float().flatten().tolist()

g = torch.Generator().manual_seed(0)
a, b = torch.randn(4, 8, generator=g), torch.randn(8, 3, generator=g)
img, w = torch.randn(2, 3, 6, 6, generator=g), torch.randn(4, 3, 3, 3, generator=g)
for lowp in (torch.bfloat16, torch.float16):
    k = str(lowp).split(".")[1]
    with torch.autocast("cpu", dtype=lowp):
        r = {
            "mm": a @ b, "linear": F.linear(a, b.t()), "conv2d": F.conv2d(img, w),
            "bmm": torch.bmm(a[None], b[None]), "baddbmm": torch.baddbmm(torch.zeros(1, 4, 3), a[None], b[None]),
            "einsum": torch.einsum("ij,jk->ik", a, b),
            "mm_f64": a.double() @ b.double(),
            "mm_lowp_in": a.to(lowp) @ b.to(lowp),
            "mse": F.mse_loss(a.to(lowp), a.to(lowp) * 2),
            "softmax": torch.softmax(a.to(lowp), -1), "relu": torch.relu(a),
            "layer_norm": F.layer_norm(a.to(lowp), (8,)),
            "cat_mixed": torch.cat([a, a.to(lowp)]), "cat_low": torch.cat([a.to(lowp), a.to(lowp)]),
            "cat_f64": torch.cat([a.double(), a.to(lowp)]), "stack": torch.stack([a, a.to(lowp)]),
            "cross_entropy": F.cross_entropy(a.to(lowp), torch.tensor([0, 1, 2, 3])),
            "fft": torch.fft.rfft(a.to(lowp)),
            "sdpa": F.scaled_dot_product_attention(a[None, None], a[None, None], a[None, None]),
        }
        with torch.autocast("cpu", enabled=False):
            r["disabled_inner"] = a @ b
        with torch._C._DisableAutocast():
            r["disable_autocast"] = a @ b
            out[f"{k}_disable_state"] = torch.is_autocast_enabled("cpu")
        r["after_inner"] = a @ b
        out[f"{k}_state"] = [torch.is_autocast_enabled("cpu"), str(torch.get_autocast_dtype("cpu")),
                             torch._C._is_any_autocast_enabled()]
    out[f"{k}_dtypes"] = {n: dt(t) for n, t in r.items()}
    for n in ("mm", "linear", "conv2d", "bmm", "einsum", "sdpa"):
        keep(f"{k}_{n}", r[n])
    keep(f"{k}_mse", r["mse"]); keep(f"{k}_cross_entropy", r["cross_entropy"])
out["after_state"] = [torch.is_autocast_enabled("cpu"), torch._C._is_any_autocast_enabled()]
with torch.autocast("cpu"):
    out["prioritize"] = err(lambda: torch.cat([a.to(torch.float16), a.to(torch.bfloat16)]))
# the state queries' device argument: a type name, "type:index", or refused as upstream refuses
# (a device type autocast does not know is refused, its dtype unset; every other is a type name)
def res(f):
    try:
        return ["ok", str(f())]
    except Exception as e:
        return [type(e).__name__, str(e).split("\n")[0]]
out["device_args"] = [[str(d), res(lambda: f(d))]
                      for f in (torch.is_autocast_enabled, torch.get_autocast_dtype)
                      for d in ("cpu", "cuda", "cpu:0", "meta", "lazy", "ve", "cpux", "", 3,
                                torch.device("cpu"), "xla", "hpu", "maia", "mps", "xpu")]
out["set_device_args"] = [res(lambda: torch.set_autocast_enabled(d, False)) for d in (3, "cpux", "meta")]
out["set_dtype_args"] = [res(lambda: torch.set_autocast_dtype("cpu", 3)), str(torch.get_autocast_dtype("cpu")),
                         res(lambda: torch.set_autocast_dtype("meta", torch.float16)),
                         str(torch.get_autocast_dtype("meta")), torch._C._is_autocast_available("meta")]
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out["deprecated"] = [torch._C.is_autocast_cpu_enabled(), str(torch._C.get_autocast_cpu_dtype())]
    out["deprecated_warnings"] = sorted(str(x.message).split(" (Triggered internally")[0] for x in caught)

# the graph: casts recorded by autograd, the cache
torch.manual_seed(1)
lin = nn.Linear(8, 8)
x = torch.randn(2, 8)
with torch.autocast("cpu"):
    y = lin(x) + lin(x)
def nodes(fn, seen):
    if fn is None or fn in seen:
        return
    seen.add(fn)
    for nxt, _ in fn.next_functions:
        nodes(nxt, seen)
seen = set(); nodes(y.grad_fn, seen)
out["graph"] = sorted(type(n).__name__ for n in seen)
with torch.autocast("cpu", cache_enabled=False):
    y2 = lin(x) + lin(x)
seen = set(); nodes(y2.grad_fn, seen)
out["graph_nocache"] = sorted(type(n).__name__ for n in seen)
y.float().sum().backward()
out["grad_dtypes"] = [dt(lin.weight.grad), dt(lin.bias.grad)]
keep("grad_w", lin.weight.grad)
with torch.no_grad():
    lin.weight.mul_(2)
with torch.autocast("cpu"):
    keep("after_write", lin(x))

# a training step of a small model under autocast
torch.manual_seed(2)
m = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.ReLU(), nn.Linear(16, 4))
opt = torch.optim.SGD(m.parameters(), lr=0.1)
xs, ys = torch.randn(6, 8), torch.tensor([0, 1, 2, 3, 0, 1])
losses = []
for _ in range(3):
    with torch.autocast("cpu"):
        logits = m(xs)
        loss = F.cross_entropy(logits, ys)
    out["train_dtypes"] = [dt(logits), dt(loss)]
    opt.zero_grad(); loss.backward(); opt.step()
    losses.append(loss.item())
vals["train_losses"] = losses
keep("train_w", m[0].weight)
print(json.dumps({"exact": out, "values": vals}))
'''


@pytest.fixture(scope="module")
def both():
    return upstream.run_both(PROGRAM)


def test_policy_table_is_upstreams():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    proc = upstream.run_script(root / "tools/gen_autocast_table.py", "--print", timeout=900)
    theirs = json.loads(proc.stdout.strip().splitlines()[-1])["policies"]
    ours = json.loads((root / "src/torchnative/csrc/dispatch/autocast_cpu.json").read_text())
    assert ours["policies"] == theirs
    assert {"lower_precision_fp", "fp32", "promote"} == set(theirs.values())


def test_behaviour_is_upstreams(both):
    ours, up = both
    for key, value in up["exact"].items():
        assert ours["exact"][key] == value, key


def test_the_cases_are_not_vacuous(both):
    """Control: upstream really casts (a product is 16-bit inside, float32 outside and with
    autocast disabled) and the cache really saves casts."""
    _, up = both
    d = up["exact"]["bfloat16_dtypes"]
    assert d["mm"] == "bfloat16" and d["disabled_inner"] == "float32" and d["mse"] == "float32"
    assert d["cat_mixed"] == "float32" and d["mm_f64"] == "float64"
    assert up["exact"]["graph"].count("ToCopyBackward0") < \
        up["exact"]["graph_nocache"].count("ToCopyBackward0")


@pytest.mark.parametrize("name", ["bfloat16_mm", "bfloat16_linear", "bfloat16_conv2d",
                                  "bfloat16_bmm", "bfloat16_einsum", "bfloat16_sdpa",
                                  "float16_mm", "float16_linear", "float16_conv2d",
                                  "float16_bmm", "float16_einsum", "float16_sdpa",
                                  "after_write"])
def test_16_bit_products_within_one_rounding(both, name):
    ours, up = both
    o, u = np.array(ours["values"][name]), np.array(up["values"][name])
    bits = 8 if name.startswith("bfloat16") or name == "after_write" else 11
    np.testing.assert_array_less(np.abs(o - u), 2.0 ** -bits * np.maximum(np.abs(u), 1e-3) + 1e-30)


@pytest.mark.parametrize("name", ["bfloat16_mse", "bfloat16_cross_entropy", "float16_mse",
                                  "float16_cross_entropy", "grad_w", "train_losses", "train_w"])
def test_float32_results_agree(both, name):
    ours, up = both
    np.testing.assert_allclose(ours["values"][name], up["values"][name], rtol=2e-2 if
                               name.startswith(("grad", "train")) else 1e-6, atol=1e-6)
