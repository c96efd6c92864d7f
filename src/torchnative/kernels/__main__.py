"""``python -m torchnative.kernels bundle``: build a kernel bundle at build time.

    python -m torchnative.kernels bundle --out DIR [--target torch213-cxx11-cpu-x86_64-linux]
        [--kernel REPO_ID=PATH[@VERSION] ...] [--mapping FILE] [--default]

``--default`` bundles torchnative's own CPU repository (``torchnative/cpu-kernels``) with its
layer mapping; ``--kernel`` adds repositories in the Hugging Face layout (a checkout or a
hub-cache snapshot). Without ``--target`` the running system is the target.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .bundle import KernelSource, build_bundle
from .variants import Target

HERE = Path(__file__).resolve().parent
CPU_REPO = KernelSource("torchnative/cpu-kernels", HERE / "repos" / "torchnative-cpu", 1)
CPU_MAPPING = HERE / "cpu_mapping.json"


def _source(spec: str) -> KernelSource:
    repo_id, sep, rest = spec.partition("=")
    if not sep or "/" not in repo_id:
        raise SystemExit(f"--kernel wants REPO_ID=PATH[@VERSION], got {spec!r}")
    path, _, version = rest.partition("@")
    return KernelSource(repo_id, Path(path), int(version) if version else 1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m torchnative.kernels")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("bundle", help="build a kernel bundle")
    b.add_argument("--out", required=True, type=Path)
    b.add_argument("--target", help="e.g. torch213-cxx11-cpu-x86_64-linux (default: this system)")
    b.add_argument("--kernel", action="append", default=[], help="REPO_ID=PATH[@VERSION]")
    b.add_argument("--mapping", type=Path, help="JSON layer mapping the bundle registers")
    b.add_argument("--default", action="store_true", help="include torchnative/cpu-kernels")
    args = ap.parse_args(argv)
    sources = [CPU_REPO] if args.default else []
    sources += [_source(s) for s in args.kernel]
    if not sources:
        ap.error("nothing to bundle: pass --default and/or --kernel")
    mapping = json.loads(args.mapping.read_text()) if args.mapping else (
        json.loads(CPU_MAPPING.read_text()) if args.default else {})
    target = Target.parse(args.target) if args.target else Target.current()
    manifest = build_bundle(sources, target, args.out, mapping)
    for e in manifest["kernels"]:
        print(f"{e['repo-id']}: {e['variant']} (revision {e['revision']})")
    print(f"bundle for {target.name} written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
