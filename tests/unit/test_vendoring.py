"""The vendored torch tree is upstream's 2.13.0 wheel, byte for byte, plus a documented overlay."""

from __future__ import annotations

import base64
import csv
import hashlib
import io
import json
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import vendor_torch  # noqa: E402

SITE = Path(sysconfig.get_paths()["purelib"])
DIST = SITE / f"torch-{vendor_torch.TORCH_VERSION}.dist-info"


def _manifest() -> dict:
    return json.loads((DIST / vendor_torch.MANIFEST).read_text())


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _installed_files() -> list[str]:
    out = []
    for top in vendor_torch.TOP_LEVEL:
        for p in (SITE / top).rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts:
                out.append(p.relative_to(SITE).as_posix())
    return sorted(out)


def _wheel_record() -> dict[str, str]:
    """The upstream wheel's own RECORD, read from the wheel itself (not from our manifest)."""
    m = _manifest()
    wheel = REPO / ".cache/wheels" / m["wheel"]
    if not wheel.exists():
        pytest.skip(f"upstream wheel {wheel} not in the cache")
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() == m["wheel_sha256"]
    with zipfile.ZipFile(wheel) as zf:
        return vendor_torch.wheel_record(zf)


def test_every_installed_file_is_upstreams_or_overlay():
    record = _wheel_record()
    overlay = set(vendor_torch.OVERLAY)
    files = _installed_files()
    assert len(files) > 2000
    differing = []
    for rel in files:
        if rel in overlay:
            continue
        want = record.get(rel)
        if want is None or _hash((SITE / rel).read_bytes()) != want:
            differing.append(rel)
    assert differing == [], f"{len(differing)} vendored files differ from the wheel: {differing[:10]}"


def test_overlay_is_short_and_documented():
    assert set(vendor_torch.OVERLAY) == {"torch/_C/__init__.py", "torch/bin/torch_shm_manager"}
    for path, why in vendor_torch.OVERLAY.items():
        assert len(why) > 40, f"overlay entry {path} needs its reason"
        assert (SITE / path).exists()


def test_nothing_upstream_ships_was_replaced():
    """Overlay files never stand in for a file we vendor (the marker replaces a compiled
    executable that is left out, not a Python file)."""
    record = _wheel_record()
    vendored = {n for n in record if vendor_torch.wanted(n)}
    assert not set(vendor_torch.OVERLAY) & vendored


def test_no_compiled_file_is_vendored():
    compiled = []
    for rel in _installed_files():
        with open(SITE / rel, "rb") as f:
            head = f.read(8)
        if vendor_torch.is_compiled(rel, head):
            compiled.append(rel)
    assert compiled == []


def test_all_python_of_the_wheel_is_vendored():
    record = _wheel_record()
    wanted = {n for n in record if vendor_torch.wanted(n) and n.endswith((".py", ".pyi", ".yaml"))}
    missing = sorted(wanted - set(_installed_files()))
    assert missing == []


def test_metadata_version():
    from importlib.metadata import version

    assert version("torch") == "2.13.0"


def test_import_loads_no_compiled_torch():
    code = (
        "import sys, torch, json\n"
        "maps = open('/proc/self/maps').read()\n"
        "so = [m.__name__ for m in list(sys.modules.values())\n"
        "      if (getattr(m, '__file__', '') or '').endswith(('.so', '.pyd'))\n"
        "      and m.__name__.split('.')[0] in ('torch', 'torchgen', 'functorch', 'torchnative')]\n"
        "print(json.dumps({'so': so, 'libtorch': 'libtorch' in maps, 'c': torch._C.__file__,\n"
        "                  'version': torch.__version__}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["so"] == []
    assert result["libtorch"] is False
    assert "/torchnative/" in result["c"]
    assert result["version"].startswith("2.13.0")
