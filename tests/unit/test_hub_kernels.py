"""The kernels contract (torchnative.kernels): variant naming and ranking, modes, the mapping
and kernelize's fallback rules, layer validation, bundles (selection, lock file, digests,
refusals) and a Hugging Face-layout repository loading through the bundle."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import torch
from torch import nn

import torchnative.kernels as K
from torchnative.kernels import variants as V

HERE = Path(__file__).resolve().parent


def test_variant_ranking_follows_the_contract():
    t = V.Target((2, 13), True, "cpu", "x86_64", "linux")
    names = ["torch-universal", "torch-cpu", "torch213-cxx11-cpu-x86_64-linux", "torch213-cpu-x86_64-linux",
             "torch212-cxx11-cpu-x86_64-linux", "torch213-cxx11-cu128-x86_64-linux",
             "torch213-cxx11-cpu-aarch64-linux", "torch-cuda", "not-a-variant",
             "torch-stable-abi210-cpu-x86_64-linux", "torch-stable-abi214-cpu-x86_64-linux"]
    fitting, trace = V.resolve(names, t)
    assert fitting == ["torch-stable-abi210-cpu-x86_64-linux", "torch213-cpu-x86_64-linux",
                       "torch213-cxx11-cpu-x86_64-linux", "torch-cpu", "torch-universal"]
    reasons = dict(trace)
    assert "Torch version (2.12)" in reasons["torch212-cxx11-cpu-x86_64-linux"]
    assert "backend (cu128)" in reasons["torch213-cxx11-cu128-x86_64-linux"]
    assert "CPU (aarch64)" in reasons["torch213-cxx11-cpu-aarch64-linux"]
    assert "too new" in reasons["torch-stable-abi214-cpu-x86_64-linux"]
    assert "not-a-variant" not in reasons
    cuda = V.Target((2, 13), True, "cu126", "x86_64", "linux")
    assert V.resolve(["torch213-cxx11-cu128-x86_64-linux", "torch213-cxx11-cu124-x86_64-linux",
                      "torch213-cxx11-cu126-x86_64-linux"], cuda)[0] == [
        "torch213-cxx11-cu126-x86_64-linux", "torch213-cxx11-cu124-x86_64-linux"]


def test_target_of_this_interpreter():
    assert K.Target.current().name == "torch213-cxx11-cpu-x86_64-linux"
    with pytest.raises(ValueError, match="Invalid backend"):
        K.Target.current("cuda")


def test_mode_exclusions():
    with pytest.raises(ValueError, match="mutually exclusive"):
        K.Mode.INFERENCE | K.Mode.TRAINING
    with pytest.raises(ValueError, match="FALLBACK cannot be combined"):
        K.Mode.FALLBACK | K.Mode.INFERENCE
    with pytest.raises(ValueError, match="only be used to register"):
        K.kernelize(nn.Linear(1, 1), mode=K.Mode.FALLBACK, device="cpu")


def test_repository_requires_version_xor_revision():
    with pytest.raises(ValueError, match="not both"):
        K.LayerRepository("a/b", layer_name="X", version=1, revision="main")
    with pytest.raises(ValueError, match="must be specified"):
        K.LayerRepository("a/b", layer_name="X")
    assert K.LayerRepository("a/b", layer_name="X", version=1) == \
        K.LayerRepository("a/b", layer_name="X", version=1)


# --- a tiny kernel repository in the Hugging Face layout ---------------------------------------

LAYERS = '''
import torch
from torch import nn

class Double(nn.Module):
    has_backward = False
    def forward(self, x):
        return x * 2

class WithInit(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return x

class WithMember(nn.Module):
    extra = 1
    def forward(self, x):
        return x

class TwoArgs(nn.Module):
    def forward(self, x, y):
        return x
'''


def make_repo(root: Path, variants=("torch-cpu",), name="toy-kernel", kid="_toy_kernel_1a2b3c4"):
    for v in variants:
        d = root / "build" / v
        d.mkdir(parents=True)
        (d / "__init__.py").write_text("from . import layers\nVARIANT = %r\n" % v)
        (d / "layers.py").write_text(LAYERS)
        (d / "metadata.json").write_text(json.dumps({
            "name": name, "id": f"{kid}_{v.replace('-', '_')}", "version": 1, "license": "MIT",
            "python-depends": [], "backend": {"type": "cpu"}}))
    return root


@K.use_kernel_forward_from_hub("Toy")
class Toy(nn.Module):
    def forward(self, x):
        return x + 1


@pytest.fixture
def toy_bundle(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo", ("torch212-cxx11-cpu-x86_64-linux", "torch-cpu",
                                         "torch-universal", "torch213-cxx11-cu128-x86_64-linux"))
    out = tmp_path / "bundle"
    K.build_bundle([K.KernelSource("org/toy", repo, 1)], K.Target.current(), out)
    monkeypatch.setenv("TORCHNATIVE_KERNELS_BUNDLE", str(out))
    return out


def test_bundle_selects_the_best_variant_and_locks_it(toy_bundle):
    manifest = json.loads((toy_bundle / "bundle.json").read_text())
    (entry,) = manifest["kernels"]
    assert entry["variant"] == "torch-cpu"
    assert sorted(p.name for p in (toy_bundle / "kernels/org--toy").iterdir()) == ["torch-cpu"]
    (lock,) = json.loads((toy_bundle / "kernels.lock").read_text())
    assert lock["dependency"] == {"repo-id": "org/toy", "version": {"version": 1}}
    assert lock["lock"]["commit"] == entry["revision"] and len(entry["revision"]) == 40
    mod = K.get_kernel("org/toy", version=1)
    assert mod.VARIANT == "torch-cpu"
    assert K.get_kernel("org/toy", revision=entry["revision"]) is mod
    assert K.load_kernel("org/toy", lockfile=toy_bundle / "kernels.lock") is mod
    assert K.has_kernel("org/toy", version=1) and not K.has_kernel("org/toy", version=2)
    assert not K.has_kernel("org/absent", version=1)


def test_kernel_missing_from_bundle_is_file_not_found(toy_bundle):
    with pytest.raises(K.KernelNotInBundleError, match="not in the bundle") as e:
        K.get_kernel("kernels-community/activation", version=1)
    assert isinstance(e.value, FileNotFoundError)
    with pytest.raises(K.KernelNotInBundleError, match="version 2"):
        K.get_kernel("org/toy", version=2)
    with pytest.raises(ValueError, match="Only one"):
        K.get_kernel("org/toy", version=1, revision="x")


def test_tampered_bundle_is_refused_by_name(toy_bundle):
    f = toy_bundle / "kernels/org--toy/torch-cpu/layers.py"
    f.write_text(f.read_text() + "\n# changed\n")
    with pytest.raises(K.KernelDigestError, match="File hash mismatch for layers.py"):
        K.get_kernel("org/toy", version=1)


def test_added_file_and_metadata_change_are_refused(tmp_path, monkeypatch, toy_bundle):
    (toy_bundle / "kernels/org--toy/torch-cpu/extra.py").write_text("x = 1\n")
    with pytest.raises(K.KernelDigestError, match="Unknown file: extra.py"):
        K.get_kernel("org/toy", version=1)
    (toy_bundle / "kernels/org--toy/torch-cpu/extra.py").unlink()
    m = toy_bundle / "kernels/org--toy/torch-cpu/metadata.json"
    m.write_text(m.read_text().replace('"MIT"', '"GPL"'))
    with pytest.raises(K.KernelDigestError, match="metadata.json"):
        K.get_kernel("org/toy", version=1)


def test_variant_for_another_torch_is_refused_by_name(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo", ("torch212-cxx11-cpu-x86_64-linux",), kid="_toy_other")
    out = tmp_path / "b"
    K.build_bundle([K.KernelSource("org/toy", repo, 1)], K.Target.parse("torch212-cxx11-cpu-x86_64-linux"), out)
    monkeypatch.setenv("TORCHNATIVE_KERNELS_BUNDLE", str(out))
    with pytest.raises(K.KernelVariantError, match=r"Torch version \(2.12\)"):
        K.get_kernel("org/toy", version=1)
    assert not K.has_kernel("org/toy", version=1)
    with pytest.raises(K.BundleError, match="no build variant"):
        K.build_bundle([K.KernelSource("org/toy", repo, 1)], K.Target.current(), tmp_path / "c")


def test_kernelize_replaces_and_falls_back_as_the_contract_says(toy_bundle):
    x = torch.full((3,), 3.0)          # Toy gives 4, the Double kernel 6
    double = {"Toy": {"cpu": K.LayerRepository("org/toy", layer_name="Double", version=1)}}
    m = Toy()
    with K.use_kernel_mapping(double):
        K.kernelize(m, mode=K.Mode.INFERENCE, device="cpu")
    assert m(x).tolist() == [6.0] * 3
    # outside the context the mapping is gone: no layer -> original forward (DEFAULT) or error
    m2 = Toy()
    with K.use_kernel_mapping({}, inherit_mapping=False):
        K.kernelize(m2, mode=K.Mode.INFERENCE, device="cpu")
        assert m2(x).tolist() == [4.0] * 3
        with pytest.raises(ValueError, match="No layer mapping for `Toy`"):
            K.kernelize(Toy(), mode=K.Mode.INFERENCE, device="cpu", use_fallback=False)
    # no device entry
    cuda_only = {"Toy": {"cuda": K.LayerRepository("org/toy", layer_name="Double", version=1)}}
    with K.use_kernel_mapping(cuda_only, inherit_mapping=False):
        m3 = Toy()
        K.kernelize(m3, mode=K.Mode.INFERENCE, device="cpu")
        assert m3(x).tolist() == [4.0] * 3 and m3.forward.__func__ is Toy.forward
        with pytest.raises(ValueError, match="device type"):
            K.kernelize(Toy(), mode=K.Mode.INFERENCE, device="cpu", use_fallback=False)
    # a layer without backward: TRAINING falls back (NO_COMPATIBLE_MODE) or raises
    with K.use_kernel_mapping(double, inherit_mapping=False):
        m4 = Toy()
        K.kernelize(m4, mode=K.Mode.TRAINING, device="cpu")
        assert m4.forward.__func__ is Toy.forward
        with pytest.raises(ValueError, match="does not support mode"):
            K.kernelize(Toy(), mode=K.Mode.TRAINING, device="cpu", use_fallback=False)
    # registered for TRAINING but cannot do backward: refused
    train = {"Toy": {"cpu": {K.Mode.TRAINING: K.LayerRepository("org/toy", layer_name="Double", version=1)}}}
    with K.use_kernel_mapping(train, inherit_mapping=False):
        with pytest.raises(ValueError, match="does not support backward"):
            K.kernelize(Toy(), mode=K.Mode.INFERENCE, device="cpu")
    # INFERENCE-only registration, TRAINING asked: no compatible mode
    inf = {"Toy": {"cpu": {K.Mode.INFERENCE: K.LayerRepository("org/toy", layer_name="Double", version=1)}}}
    with K.use_kernel_mapping(inf, inherit_mapping=False):
        with pytest.raises(ValueError, match="configuration mode"):
            K.kernelize(Toy(), mode=K.Mode.TRAINING, device="cpu", use_fallback=False)
    # a kernel missing from the bundle: CANNOT_LOAD falls back under ALL, raises under DEFAULT
    absent = {"Toy": {"cpu": K.LayerRepository("org/absent", layer_name="Double", version=1)}}
    with K.use_kernel_mapping(absent, inherit_mapping=False):
        m5 = Toy()
        K.kernelize(m5, mode=K.Mode.INFERENCE, device="cpu", use_fallback=K.KernelizeFallback.ALL)
        assert m5(x).tolist() == [4.0] * 3 and m5.forward.__func__ is Toy.forward
        with pytest.raises(FileNotFoundError):
            K.kernelize(Toy(), mode=K.Mode.INFERENCE, device="cpu")


@pytest.mark.parametrize("layer,msg", [("WithInit", "must not override nn.Module constructor"),
                                       ("WithMember", "must not contain additional members"),
                                       ("TwoArgs", "different number of arguments")])
def test_layer_validation(toy_bundle, layer, msg):
    mapping = {"Toy": {"cpu": K.LayerRepository("org/toy", layer_name=layer, version=1)}}
    with K.use_kernel_mapping(mapping, inherit_mapping=False):
        with pytest.raises(TypeError, match=msg):
            K.kernelize(Toy(), mode=K.Mode.INFERENCE, device="cpu")


def test_functions_become_kernelizable_modules(toy_bundle):
    @K.use_kernel_forward_from_hub("Toy")
    def plus_one(x):
        return x + 1

    @K.use_kernelized_func(plus_one)
    class User(nn.Module):
        def forward(self, x):
            return plus_one(x)

    u = User()
    assert list(u._kernel_funcs) == ["Toy"] and not list(u.children())
    with K.use_kernel_mapping({"Toy": {"cpu": K.LayerRepository("org/toy", layer_name="Double", version=1)}}):
        K.kernelize(u, mode=K.Mode.INFERENCE, device="cpu")
    assert u(torch.full((2,), 3.0)).tolist() == [6.0, 6.0]
    with pytest.raises(ValueError, match="not decorated"):
        K.use_kernelized_func(lambda x: x)(User)


def test_local_repository_in_hf_layout(tmp_path):
    repo = make_repo(tmp_path / "repo", ("torch213-cxx11-cpu-x86_64-linux", "torch-cpu"), kid="_toy_local")
    assert K.get_local_kernel(repo).VARIANT == "torch213-cxx11-cpu-x86_64-linux"
    m = Toy()
    with K.use_kernel_mapping({"Toy": {"cpu": K.LocalLayerRepository(repo, layer_name="Double")}},
                              inherit_mapping=False):
        K.kernelize(m, mode=K.Mode.INFERENCE, device="cpu")
    assert m(torch.full((1,), 3.0)).tolist() == [6.0]
    bad = make_repo(tmp_path / "bad", ("torch212-cxx11-cpu-x86_64-linux",), kid="_toy_bad")
    with pytest.raises(FileNotFoundError, match="Torch version"):
        K.get_local_kernel(bad)


def test_hub_cache_snapshot_is_locked_at_its_commit(tmp_path, monkeypatch):
    commit = "0123456789abcdef0123456789abcdef01234567"
    snap = tmp_path / "kernels--org--toy" / "snapshots" / commit
    make_repo(snap, ("torch-universal",), kid="_toy_snap")
    out = tmp_path / "b"
    K.build_bundle([K.KernelSource("org/toy", snap, 1)], K.Target.current(), out)
    (lock,) = json.loads((out / "kernels.lock").read_text())
    assert lock["lock"]["commit"] == commit
    monkeypatch.setenv("TORCHNATIVE_KERNELS_BUNDLE", str(out))
    assert K.get_kernel("org/toy", revision=commit).VARIANT == "torch-universal"


def test_default_bundle_registers_the_cpu_mapping():
    b = K.Bundle.open(Path(__import__("sys").prefix) / "share/torchnative-kernels/bundle")
    mapping = K.mapping_from_bundle(b)
    assert set(mapping) == {"RMSNorm", "rotary_pos_emb", "SiLU"}
    repos = mapping["RMSNorm"]["cpu"]
    assert set(repos) == {K.Mode.INFERENCE, K.Mode.TRAINING}
