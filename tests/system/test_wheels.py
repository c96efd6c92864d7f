"""The package as users get it: tools/build_wheels.py builds two pure wheels (torchnative, and the
vendored torch tree), and ``pip install`` of them into a clean virtual environment is all
``import torch`` and ``import transformers`` need. The install is slow (it fetches torch's and
transformers' pure-Python requirements through pip), so it runs with ``--slow``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import vendor_torch as V  # noqa: E402

SMOKE = r'''
import json
import torch
import torchnative
import torchnative._C
assert torch._C is torchnative._C, torch._C
x = torch.arange(6.0).reshape(2, 3).requires_grad_()
(x * x).sum().backward()
from transformers import BertConfig, BertModel
torch.manual_seed(0)
cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                 intermediate_size=24, max_position_embeddings=16)
model = BertModel(cfg).eval()
with torch.no_grad():
    hidden = model(torch.tensor([[1, 2, 3, 4]])).last_hidden_state
print(json.dumps({"torch": torch.__file__, "torchnative": torchnative.__file__,
                  "version": torch.__version__, "grad": x.grad.tolist(),
                  "hidden": hidden.flatten().tolist()}))
'''


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, str(ROOT / "tools" / "build_wheels.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    found = {p.name.split("-")[0]: p for p in out.glob("*.whl")}
    assert sorted(found) == ["torch", "torchnative"], sorted(out.iterdir())
    return found


def test_both_wheels_are_pure(wheels):
    for wheel in wheels.values():
        assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
        with zipfile.ZipFile(wheel) as zf:
            tag = next(n for n in zf.namelist() if n.endswith(".dist-info/WHEEL"))
            assert "Root-Is-Purelib: true" in zf.read(tag).decode()
            compiled = [n for n in zf.namelist() if V.is_compiled(n, zf.read(n)[:8])]
            assert compiled == []


def test_torchnative_wheel_carries_every_data_file(wheels):
    src = ROOT / "src"
    data = sorted(p.relative_to(src).as_posix() for p in (src / "torchnative").rglob("*")
                  if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts)
    with zipfile.ZipFile(wheels["torchnative"]) as zf:
        names = set(zf.namelist())
    assert data and [d for d in data if d not in names] == []


def test_torch_wheel_is_the_vendored_tree_and_requires_torchnative(wheels):
    with zipfile.ZipFile(wheels["torch"]) as zf:
        names = set(zf.namelist())
        meta = zf.read(f"torch-{V.TORCH_VERSION}.dist-info/METADATA").decode()
        manifest = json.loads(zf.read(f"torch-{V.TORCH_VERSION}.dist-info/{V.MANIFEST}"))
        record = {r.split(",")[0]: r.split(",")[1] for r in
                  zf.read(f"torch-{V.TORCH_VERSION}.dist-info/RECORD").decode().splitlines()}
        # every vendored file is upstream's, byte for byte (the manifest holds the upstream hashes)
        assert all(record[n] == h for n, h in manifest["files"].items())
        assert zf.read("torch/_C/__init__.py").decode() == V.C_INIT
    assert set(manifest["files"]) | set(V.OVERLAY) | {V.PTH_NAME} <= names
    assert "Requires-Dist: torchnative==" in meta and "Name: torch\n" in meta
    assert "nvidia" not in meta.lower()


def _pin(package: str) -> str:
    for line in (ROOT / "tools" / "requirements.txt").read_text().splitlines():
        if line.split("==")[0].strip() == package:
            return line.strip()
    raise LookupError(package)


@pytest.mark.slow
def test_clean_environment_imports_torch_and_transformers_from_the_wheels(wheels, tmp_path):
    """Installed into a fresh venv (no PYTHONPATH, no editable install), the smoke program runs
    on the wheels' own files and computes exactly what the source tree computes."""
    venv = tmp_path / "venv"
    # nothing of the source tree may be visible (pip would count its metadata as installed)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True, timeout=600,
                   env=env)
    py = venv / "bin" / "python"
    proc = subprocess.run([str(py), "-m", "pip", "install", "-q", str(wheels["torchnative"]),
                           str(wheels["torch"]), _pin("transformers"), _pin("numpy")],
                          capture_output=True, text=True, timeout=3000, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    listed = subprocess.run([str(py), "-m", "pip", "list"], capture_output=True, text=True,
                            env=env, cwd=tmp_path).stdout
    assert "nvidia" not in listed.lower()  # no CUDA build came along
    assert "torchnative " in listed and "torch " in listed, listed
    run = subprocess.run([str(py), "-c", SMOKE], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    site = str(venv)
    assert got["torch"].startswith(site) and got["torchnative"].startswith(site), got
    assert got["version"] == "2.13.0+cpu"
    assert got["grad"] == [[0.0, 2.0, 4.0], [6.0, 8.0, 10.0]]
    # the same program on the source tree (whose agreement with upstream the other suites check)
    ref = subprocess.run([sys.executable, "-c", SMOKE], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(ROOT / "src")), timeout=900)
    assert ref.returncode == 0, ref.stderr[-3000:]
    assert got["hidden"] == json.loads(ref.stdout.strip().splitlines()[-1])["hidden"]
