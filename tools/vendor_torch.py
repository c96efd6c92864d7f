"""Vendor the unmodified upstream torch 2.13.0 Python tree into a virtual environment.

The wheel's only compiled Python extension is ``torch/_C.*.so``; we take everything else that is
Python or data, leave out every compiled file (and the C++ build/test payload), and add the short
overlay below. The result is recorded in a manifest: the wheel's own RECORD hashes for every file
we took, so a test can prove that each vendored file is byte-identical to upstream.

Usage: python tools/vendor_torch.py --site-packages DIR [--wheel PATH]
"""

from __future__ import annotations

import argparse
import base64
import csv
import glob
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

TORCH_VERSION = "2.13.0"
TOP_LEVEL = ("torch", "torchgen", "functorch")

# Folders of the wheel that hold only native code or C++ build/test payload: shared libraries,
# executables, C++ headers, CMake configs and compiled C++ test binaries. Nothing Python imports.
EXCLUDED_DIRS = ("torch/lib/", "torch/bin/", "torch/include/", "torch/share/", "torch/test/")
COMPILED_SUFFIXES = (".so", ".dylib", ".dll", ".pyd", ".a", ".lib", ".o", ".exe")
COMPILED_MAGIC = (
    b"\x7fELF",  # Linux shared objects and executables
    b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xfe\xed\xfa\xcf", b"\xfe\xed\xfa\xce",  # Mach-O
    b"\xca\xfe\xba\xbe",  # Mach-O universal
    b"MZ",  # Windows PE
    b"!<arch>",  # static archives
)

# Files we add to the tree, each with the reason. Nothing upstream ships is replaced.
OVERLAY = {
    "torch/_C/__init__.py": "upstream ships torch._C as a compiled extension (torch/_C.*.so); this "
    "file makes the package torch._C be torchnative._C, submodules included",
    "torch/bin/torch_shm_manager": "empty marker: torch._initExtension is given this path and "
    "torch/__init__.py raises if it does not exist; we never execute it",
}

# Installed beside the tree: upstream reads the switch TORCH_USE_RTLD_GLOBAL to skip loading
# torch/lib/libtorch_global_deps.so with ctypes (a native library we do not ship).
PTH_NAME = "torchnative-torch.pth"
PTH_TEXT = "import os; os.environ.setdefault('TORCH_USE_RTLD_GLOBAL', '1')\n"

C_INIT = '''"""torch._C is torchnative._C (pure Python over numpy). Added by torchnative's vendoring."""
import sys

import torchnative._C as _impl

sys.modules[__name__] = _impl
'''

MANIFEST = "torchnative-manifest.json"


def is_compiled(name: str, head: bytes) -> bool:
    base = name.rsplit("/", 1)[-1]
    if base.endswith(COMPILED_SUFFIXES) or ".so." in base:
        return True
    return any(head.startswith(m) for m in COMPILED_MAGIC)


def wanted(name: str) -> bool:
    if name.endswith("/") or not name.startswith(tuple(t + "/" for t in TOP_LEVEL)):
        return False
    return not name.startswith(EXCLUDED_DIRS)


def find_wheel(cache: Path) -> Path:
    """Prefer a wheel already on this machine (pip's configured find-links); else fetch the macOS
    arm64 CPU wheel, which carries the same Python files and is small (never a CUDA build)."""
    cache.mkdir(parents=True, exist_ok=True)
    found = sorted(cache.glob(f"torch-{TORCH_VERSION}*.whl"))
    if found:
        return found[0]
    base = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "-d", str(cache), f"torch=={TORCH_VERSION}"]
    for extra in (["--no-index"], ["--platform", "macosx_11_0_arm64", "--python-version", "3.11"]):
        if subprocess.run(base + extra, capture_output=True).returncode == 0:
            found = sorted(cache.glob(f"torch-{TORCH_VERSION}*.whl"))
            if found:
                return found[0]
    raise SystemExit(f"could not obtain the torch {TORCH_VERSION} wheel through pip")


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def wheel_record(zf: zipfile.ZipFile) -> dict[str, str]:
    name = next(n for n in zf.namelist() if n.endswith(".dist-info/RECORD"))
    rows = csv.reader(io.StringIO(zf.read(name).decode()))
    return {r[0]: r[1] for r in rows if r and r[1]}


def requires_dist(zf: zipfile.ZipFile) -> list[str]:
    name = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
    meta = zf.read(name).decode()
    return [l for l in meta.splitlines() if l.startswith(("Requires-Dist:", "Provides-Extra:"))]


def remove_previous(site: Path) -> None:
    for top in TOP_LEVEL:
        shutil.rmtree(site / top, ignore_errors=True)
    for d in glob.glob(str(site / "torch-*.dist-info")):
        shutil.rmtree(d, ignore_errors=True)


def vendor(wheel: Path, site: Path) -> dict:
    remove_previous(site)
    taken: dict[str, str] = {}
    skipped_compiled: list[str] = []
    with zipfile.ZipFile(wheel) as zf:
        record = wheel_record(zf)
        for info in zf.infolist():
            if not wanted(info.filename):
                continue
            data = zf.read(info)
            if is_compiled(info.filename, data[:8]):
                skipped_compiled.append(info.filename)
                continue
            if record.get(info.filename) != record_hash(data):
                raise SystemExit(f"{info.filename}: content does not match the wheel's RECORD")
            dest = site / info.filename
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(data)
            taken[info.filename] = record[info.filename]
        meta_lines = requires_dist(zf)

    overlay_files = {"torch/_C/__init__.py": C_INIT.encode(), "torch/bin/torch_shm_manager": b""}
    for rel, data in overlay_files.items():
        dest = site / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(data)
    (site / PTH_NAME).write_text(PTH_TEXT)

    dist = site / f"torch-{TORCH_VERSION}.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: torch\nVersion: " + TORCH_VERSION + "\n"
        "Summary: upstream torch " + TORCH_VERSION + " Python tree on torchnative's pure-Python torch._C\n"
        + "".join(l + "\n" for l in meta_lines)
    )
    (dist / "INSTALLER").write_text("torchnative\n")
    (dist / "top_level.txt").write_text("\n".join(TOP_LEVEL) + "\n")
    manifest = {
        "torch_version": TORCH_VERSION,
        "wheel": wheel.name,
        "wheel_sha256": hashlib.sha256(wheel.read_bytes()).hexdigest(),
        "excluded_dirs": list(EXCLUDED_DIRS),
        "skipped_compiled": sorted(skipped_compiled),
        "overlay": OVERLAY,
        "pth": PTH_NAME,
        "files": taken,
    }
    (dist / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True))
    write_record(site, dist, list(taken) + list(overlay_files) + [PTH_NAME])
    return manifest


def write_record(site: Path, dist: Path, files: list[str]) -> None:
    """A RECORD so that pip can see and uninstall the distribution like any other."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    for rel in files + [str(p.relative_to(site)) for p in dist.iterdir()]:
        data = (site / rel).read_bytes()
        w.writerow([rel, record_hash(data), len(data)])
    w.writerow([str((dist / "RECORD").relative_to(site)), "", ""])
    (dist / "RECORD").write_text(out.getvalue())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--site-packages", required=True, type=Path)
    ap.add_argument("--wheel", type=Path)
    ap.add_argument("--cache", type=Path, default=Path(".cache/wheels"))
    args = ap.parse_args()
    wheel = args.wheel or find_wheel(args.cache)
    m = vendor(wheel, args.site_packages)
    print(f"vendored {len(m['files'])} files from {wheel.name} "
          f"({len(m['skipped_compiled'])} compiled files left out, {len(OVERLAY)} overlay files)")


if __name__ == "__main__":
    main()
