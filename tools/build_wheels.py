"""Build the pure wheels a user installs: ``dist/torchnative-*.whl`` and ``dist/torch-2.13.0-py3-none-any.whl``.

The torch wheel is the vendored upstream tree (tools/vendor_torch.py: every Python and data file
of the upstream 2.13.0 wheel, byte-identical, no compiled file, plus the two-file overlay and the
.pth switch), assembled here at build time and never committed. It requires torchnative, whose
_C it runs on, and upstream torch's own pure-Python requirements. ``pip install dist/*.whl`` into
a clean environment is then all ``import torch`` needs.

Usage: python tools/build_wheels.py [--out dist] [--wheel PATH-TO-UPSTREAM-TORCH-WHEEL]
"""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import vendor_torch as V  # noqa: E402

TAG = "py3-none-any"
# the vendoring's own bookkeeping for an installed tree, not part of a wheel
NOT_IN_WHEEL = ("INSTALLER", "RECORD")


def torchnative_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def build_torchnative(out: Path) -> Path:
    """torchnative's own wheel, through its pyproject (setuptools, no network)."""
    before = set(out.glob("torchnative-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "-q", "-w", str(out), str(ROOT)], check=True)
    made = sorted(set(out.glob("torchnative-*.whl")) - before) or sorted(out.glob("torchnative-*.whl"))
    wheel = made[-1]
    if not wheel.name.endswith(f"-{TAG}.whl"):
        raise SystemExit(f"{wheel.name} is not a pure wheel")
    return wheel


def build_torch(out: Path, upstream: Path) -> Path:
    """The vendored tree as torch-2.13.0-py3-none-any.whl."""
    name = f"torch-{V.TORCH_VERSION}"
    dist_info = f"{name}.dist-info"
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp)
        V.vendor(upstream, site)
        dist = site / dist_info
        meta = (dist / "METADATA").read_text()
        (dist / "METADATA").write_text(meta + f"Requires-Dist: torchnative=={torchnative_version()}\n")
        (dist / "WHEEL").write_text("Wheel-Version: 1.0\nGenerator: torchnative tools/build_wheels.py\n"
                                    f"Root-Is-Purelib: true\nTag: {TAG}\n")
        for extra in NOT_IN_WHEEL:
            (dist / extra).unlink(missing_ok=True)
        files = sorted(p for p in site.rglob("*") if p.is_file())
        wheel = out / f"{name}-{TAG}.whl"
        record = io.StringIO()
        writer = csv.writer(record, lineterminator="\n")
        with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as zf:
            # dist-info last, as the wheel format recommends
            for path in sorted(files, key=lambda p: (p.relative_to(site).parts[0] == dist_info, str(p))):
                rel = path.relative_to(site).as_posix()
                data = path.read_bytes()
                zf.writestr(rel, data)
                writer.writerow([rel, V.record_hash(data), len(data)])
            writer.writerow([f"{dist_info}/RECORD", "", ""])
            zf.writestr(f"{dist_info}/RECORD", record.getvalue())
    return wheel


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "dist")
    ap.add_argument("--wheel", type=Path, help="the upstream torch 2.13.0 wheel (found through pip "
                    "when not given)")
    ap.add_argument("--cache", type=Path, default=ROOT / ".cache" / "wheels")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    upstream = args.wheel or V.find_wheel(args.cache)
    for wheel in (build_torchnative(args.out), build_torch(args.out, upstream)):
        print(wheel)


if __name__ == "__main__":
    main()
