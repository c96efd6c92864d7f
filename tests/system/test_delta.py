"""torchnative.delta: coverage, memory, bit-identical revert (also after a failed step), method
state owned by the delta, lifetimes as types, stacking, and safetensors files read back by a new
process (corrupt, foreign, other-user and other-lifetime files refused with the model untouched)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.nn as nn

from torchnative.delta import (DeltaFileError, FederatedDelta, LifetimeError, MissingLayer,
                               PersistentDelta, RequestDelta, SessionDelta, deepcopy_nbytes, select)
from torchnative.testing import upstream


def cnn(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                         nn.Flatten(), nn.Linear(16 * 64, 10))


def snapshot(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def bitwise_same(a: dict, b: dict) -> list[str]:
    """names whose bytes differ (the revert check)."""
    bad = []
    for k in a:
        x, y = a[k].reshape(-1), b[k].reshape(-1)
        if x.dtype != y.dtype or x.shape != y.shape or not torch.equal(x.view(torch.uint8), y.view(torch.uint8)):
            bad.append(k)
    return bad


def train_steps(model, n=3, lr=0.1):
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr)
    for i in range(n):
        model(torch.randn(4, 1, 8, 8)).logsumexp(1).mean().backward()
        opt.step()
        opt.zero_grad()
    return opt


def all_names(model):
    return select.norm_affine(model) + select.bn_stats(model)


def test_covers_only_what_it_adapts_and_reports_bytes():
    m = cnn()
    d = SessionDelta(m, all_names(m))
    assert set(d.names) == {"1.weight", "1.bias", "1.running_mean", "1.running_var",
                            "1.num_batches_tracked", "4.weight", "4.bias", "4.running_mean",
                            "4.running_var", "4.num_batches_tracked"}
    expect = 4 * (4 * 8 + 4 * 16) + 2 * 8  # four float vectors per BN, two int64 counters
    assert d.nbytes == expect
    assert deepcopy_nbytes(m) == sum(v.numel() * v.element_size() for v in m.state_dict().values())
    assert d.nbytes < deepcopy_nbytes(m) / 50


def test_revert_is_bit_identical_including_buffers():
    m = cnn()
    before = snapshot(m)
    d = SessionDelta(m, all_names(m))
    m.requires_grad_(False)
    for n in select.norm_affine(m):
        d._get(n).requires_grad_(True)
    train_steps(m)
    assert set(d.changed()) == set(d.names)  # every covered tensor moved, counters included
    assert bitwise_same(before, snapshot(m))
    d.revert()
    assert bitwise_same(before, snapshot(m)) == []


def test_a_delta_that_forgets_a_buffer_fails_the_revert_check():
    m = cnn()
    before = snapshot(m)
    names = [n for n in all_names(m) if n != "4.running_var"]
    d = SessionDelta(m, names)
    m.requires_grad_(False)
    for n in select.norm_affine(m):
        d._get(n).requires_grad_(True)
    train_steps(m)
    d.revert()
    assert bitwise_same(before, snapshot(m)) == ["4.running_var"]


def test_failed_step_restores_values_and_method_state():
    m = cnn()
    d = SessionDelta(m, select.norm_affine(m))
    m.requires_grad_(False)
    params = [d._get(n).requires_grad_(True) for n in d.names]
    d.state["optimizer"] = opt = torch.optim.Adam(params, lr=0.1)
    d.state["ema"] = 1.0
    with d.step():
        m(torch.randn(4, 1, 8, 8)).logsumexp(1).mean().backward()
        opt.step()
        opt.zero_grad()
    mid_vals, mid_moments = d.current(), opt.state_dict()["state"][0]["exp_avg"].clone()
    with pytest.raises(ZeroDivisionError):
        with d.step():
            m(torch.randn(4, 1, 8, 8)).logsumexp(1).mean().backward()
            opt.step()
            d.state["ema"] = 2.0
            1 / 0
    assert all(torch.equal(mid_vals[n], d.current()[n]) for n in d.names)
    assert torch.equal(opt.state_dict()["state"][0]["exp_avg"], mid_moments)
    assert d.state["ema"] == 1.0 and all(p.grad is None for p in params)
    # and revert still reaches the base, and drops the method's state
    d.revert()
    assert d.changed() == [] and d.state == {}


def test_lifetimes_answer_their_three_questions(tmp_path):
    m = cnn()
    names = select.norm_affine(m)
    s = SessionDelta(m, names)
    with pytest.raises(LifetimeError, match="per-session delta may not leave the device"):
        s.export()
    with pytest.raises(LifetimeError, match="per-session delta may not be saved"):
        s.save(tmp_path / "s.safetensors")
    s.close()
    p = PersistentDelta(m, names, user="ann")
    with pytest.raises(LifetimeError, match="persistent per-user delta may not leave the device"):
        p.export()
    with pytest.raises(LifetimeError, match="persistent per-user delta may not be discarded"):
        p.discard()
    p.close()
    f = FederatedDelta(m, names)
    with torch.no_grad():
        m[1].weight.add_(0.5)
    off = f.export()
    assert torch.equal(off["1.weight"], torch.full((8,), 0.5)) and not off["1.bias"].any()
    f.close()
    with RequestDelta(m, names) as r:
        with torch.no_grad():
            m[1].weight.add_(1.0)
        with pytest.raises(LifetimeError, match="per-request"):
            r.save(tmp_path / "r.safetensors")
    assert torch.equal(m[1].weight, torch.ones(8))  # reverted when the request ended


def test_stacked_layers_revert_alone():
    m = cnn()
    base = snapshot(m)
    p = PersistentDelta(m, select.norm_affine(m), user="ann")
    with torch.no_grad():
        m[1].weight.mul_(1.5)
        m[4].bias.add_(0.25)
    after_p = snapshot(m)
    s = SessionDelta(m, select.norm_affine(m) + select.bn_stats(m), parent=p)
    with pytest.raises(ValueError, match="stack on the top"):
        SessionDelta(m, select.norm_affine(m), parent=p)
    with torch.no_grad():
        m[1].weight.add_(0.5)
        m[1].running_mean.add_(2.0)
    s.revert()
    assert bitwise_same(after_p, snapshot(m)) == []
    with torch.no_grad():
        m[1].weight.add_(0.5)
    p.revert()  # the user's layer out; the session's +0.5 stays, now over the base
    assert torch.equal(m[1].weight, base["1.weight"] + 0.5)
    assert torch.equal(m[4].bias, base["4.bias"])
    assert s.changed() == ["1.weight"] and p.changed() == []
    s.revert()
    assert bitwise_same(base, snapshot(m)) == []


def _write_weights(m, path):
    from safetensors.torch import save_file
    save_file({k: v.contiguous() for k, v in m.state_dict().items()}, str(path))


RELOAD = """
import json, sys, torch, torch.nn as nn
from safetensors.torch import load_file
sys.path.insert(0, {tests!r})
from test_delta import cnn
from torchnative.delta import PersistentDelta
m = cnn(); m.load_state_dict(load_file({weights!r}))
d = PersistentDelta.load(m, {path!r}, user="ann")
print(json.dumps({{n: d._get(n).detach().reshape(-1).view(torch.int32 if d._get(n).dtype == torch.float32 else torch.int64).tolist() for n in d.names}}))
"""


def test_persistent_delta_survives_a_restart(tmp_path):
    m = cnn()
    _write_weights(m, tmp_path / "w.safetensors")
    p = PersistentDelta(m, select.norm_affine(m) + select.bn_stats(m), user="ann")
    m.requires_grad_(False)
    for n in select.norm_affine(m):
        p._get(n).requires_grad_(True)
    train_steps(m, 2)
    want = {n: p._get(n).detach().reshape(-1).view(torch.int32 if p._get(n).dtype == torch.float32
                                                   else torch.int64).tolist() for n in p.names}
    p.save(tmp_path / "ann.safetensors")
    code = RELOAD.format(tests=str(__import__("pathlib").Path(__file__).parent),
                         weights=str(tmp_path / "w.safetensors"), path=str(tmp_path / "ann.safetensors"))
    got = upstream.run_json_ours(code, timeout=300)
    assert got == want  # a new process, the same bits


def test_bad_files_are_refused_and_the_model_untouched(tmp_path):
    m = cnn()
    p = PersistentDelta(m, select.norm_affine(m), user="ann")
    with torch.no_grad():
        m[1].weight.add_(0.5)
    good = tmp_path / "ann.safetensors"
    p.save(good)
    p.revert()
    pristine = snapshot(m)
    raw = good.read_bytes()
    (tmp_path / "trunc.safetensors").write_bytes(raw[:len(raw) // 2])
    (tmp_path / "junk.safetensors").write_bytes(b"not a safetensors file at all")
    cases = {"trunc.safetensors": "corrupt", "junk.safetensors": "corrupt"}
    for name, why in cases.items():
        with pytest.raises(DeltaFileError, match=why):
            PersistentDelta.load(m, tmp_path / name, user="ann")
    with pytest.raises(DeltaFileError, match="another user"):
        PersistentDelta.load(m, good, user="bob")
    with pytest.raises(DeltaFileError, match="not a 'federated' one"):
        FederatedDelta.load(m, good, user="ann")
    other = cnn(seed=1)  # same shapes, other base weights
    with pytest.raises(DeltaFileError, match="other base weights"):
        PersistentDelta.load(other, good, user="ann")
    wider = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4))
    with pytest.raises(DeltaFileError, match="foreign"):
        PersistentDelta.load(wider, good, user="ann")
    from safetensors.torch import save_file
    save_file({"1.weight": torch.ones(8)}, str(tmp_path / "plain.safetensors"))
    with pytest.raises(DeltaFileError, match="not a torchnative delta"):
        PersistentDelta.load(m, tmp_path / "plain.safetensors", user="ann")
    assert bitwise_same(pristine, snapshot(m)) == []
    d = PersistentDelta.load(m, good, user="ann")
    assert d.changed() == ["1.weight"]


def test_selectors_find_every_norm_layer_type():
    class Own(nn.Module):  # a model-library norm without a torch base class (as LlamaRMSNorm)
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(4))

    Own.__name__ = "MyRMSNorm"
    m = nn.Sequential(nn.Linear(4, 4), nn.LayerNorm(4), nn.BatchNorm1d(4), nn.RMSNorm(4), Own(),
                      nn.GroupNorm(2, 4))
    assert select.norm_affine(m) == ["1.weight", "1.bias", "2.weight", "2.bias", "3.weight",
                                     "4.weight", "5.weight", "5.bias"]
    assert select.bn_stats(m) == ["2.running_mean", "2.running_var", "2.num_batches_tracked"]
    assert select.layers(m, "0") == ["0.weight", "0.bias"]
    with pytest.raises(MissingLayer, match="LoRA"):
        select.lora(m)
    with pytest.raises(KeyError, match="nope"):
        SessionDelta(m, ["0.nope"])


def test_transformers_llama_rmsnorm_is_a_norm_layer():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                      num_attention_heads=2, num_key_value_heads=1)
    assert select.norm_affine(LlamaForCausalLM(cfg)) == [
        "model.layers.0.input_layernorm.weight", "model.layers.0.post_attention_layernorm.weight",
        "model.norm.weight"]


IMPORT_ALONE = """
import json, sys
import torchnative.delta, torchnative.adapt, torchnative.api, torchnative.delta.lora, torchnative.adapt.bench
print(json.dumps(sorted(k for k in sys.modules if k.startswith(("torchnative._C", "torchnative.csrc")))))
"""


@pytest.mark.skipif(not upstream.available(), reason="upstream environment not set up")
def test_imports_on_upstream_without_our_C():
    env = upstream.upstream_env() | {"PYTHONPATH": str(upstream.REPO / "src")}
    proc = subprocess.run([str(upstream.UPSTREAM_PYTHON), "-c", IMPORT_ALONE], capture_output=True,
                          text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == []
