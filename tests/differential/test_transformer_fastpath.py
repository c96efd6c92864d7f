"""nn.TransformerEncoderLayer / TransformerEncoder in inference (eval, no grad): the fast path
through ``_transformer_encoder_layer_fwd``, against upstream torch 2.13.0 in separate processes.

Each case builds the module from a seed (the generator is bit-identical on both sides), runs it
in float32 and float64 and on float32 inputs widened to float64 (upstream's own error), and
compares at the derived tolerance (agreement_compare.py); float64 results normwise (relative to
the output's largest magnitude), because the products underneath are BLAS's, whose float64 order
differs between MKL and OpenBLAS by an ulp and whose error bounds are normwise, and layer norm
turns that into a large relative error on elements near zero. A case that also records
``used_fast_path`` shows which path ran: the cases are only meaningful if upstream took the fast
path too.
"""

from __future__ import annotations

import re

import pytest

import sides
from agreement_compare import compare
from torchnative.testing import upstream

pytestmark = pytest.mark.skipif(not upstream.available(), reason="upstream torch env missing")

PROGRAM = r'''
import torch.nn as nn

CALLS = []
_fwd = torch._transformer_encoder_layer_fwd
def _counting(*a, **k):
    CALLS.append(1)
    return _fwd(*a, **k)
torch._transformer_encoder_layer_fwd = _counting

def layer(x, norm_first, act, src_mask=None, pad=None, seed=0):
    torch.manual_seed(seed)
    m = nn.TransformerEncoderLayer(16, 4, 24, dropout=0.1, activation=act, batch_first=True,
                                   norm_first=norm_first).to(x.dtype).eval()
    with torch.no_grad():
        return m(x, src_mask=src_mask, src_key_padding_mask=pad)

rng = np.random.default_rng(5)
X = rng.standard_normal((3, 5, 16))
PAD = np.array([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])
CAUSAL = np.triu(np.ones((5, 5), dtype=bool), 1)
for nf in (False, True):
    for act in ("relu", "gelu"):
        tag = f"{'pre' if nf else 'post'}_{act}"
        case("layer_" + tag, lambda x, nf=nf, act=act: layer(x, nf, act), X)
        case("layer_pad_" + tag, lambda x, nf=nf, act=act: layer(x, nf, act, pad=torch.tensor(PAD)), X)
        case("layer_causal_" + tag, lambda x, nf=nf, act=act: layer(
            x, nf, act, src_mask=torch.tensor(CAUSAL)), X)
case("layer_float_mask", lambda x: layer(x, False, "relu", src_mask=torch.tensor(
    np.where(CAUSAL, -1e4, 0.0), dtype=x.dtype)), X)

def encoder(x, final_norm):
    torch.manual_seed(1)
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(16, 4, 24, batch_first=True), 2,
                                norm=nn.LayerNorm(16) if final_norm else None,
                                enable_nested_tensor=False).to(x.dtype).eval()
    with torch.inference_mode():
        return enc(x)
case("encoder", lambda x: encoder(x, False), X)
case("encoder_norm", lambda x: encoder(x, True), X)
case("layer_empty", lambda x: layer(x[:, :0], False, "relu"), X)
case("layer_one_token", lambda x: layer(x[:, :1], True, "gelu"), X)

before = len(CALLS)
layer(torch.tensor(X, dtype=torch.float32), False, "relu")
RESULTS["used_fast_path"] = {"values": [len(CALLS) - before], "shape": [], "dtype": "int64"}
print(json.dumps(RESULTS))
'''


@pytest.fixture(scope="module")
def results():
    return sides.on_both(PROGRAM, profiles=True)


NAMES = sorted(set(re.findall(r'case\("([a-z_]+)"', PROGRAM))
                | {f"layer_{p}{n}_{a}" for p in ("", "pad_", "causal_")
                   for n in ("pre", "post") for a in ("relu", "gelu")})


def test_upstream_takes_the_fast_path(results):
    ours, up = results
    assert up["used_fast_path"]["values"] == [1]
    assert ours["used_fast_path"] == up["used_fast_path"]


@pytest.mark.parametrize("name", [n for n in NAMES if not n.endswith("_")])
@pytest.mark.parametrize("width", ["float32", "float64"])
def test_values_agree(results, name, width):
    ours, up = results
    problem = compare(ours, up, f"{name}.{width}", normwise=width == "float64")
    assert problem is None, problem


def test_comparison_catches_a_swapped_activation(results):
    """Control: relu's result where gelu's is expected must not pass."""
    ours, up = results
    key = "layer_post_gelu.float64"
    assert compare(ours, up, key, normwise=True) is None
    assert compare({key: ours["layer_post_relu.float64"]}, up, key, normwise=True) is not None
