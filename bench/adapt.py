"""digits-C on ours and on upstream: the error table per method and setting from each torch,
adaptation memory (the delta's bytes vs one deepcopy(state_dict)) and time per batch, with the
ratio ours/upstream measured in the same run.

    .venv/bin/python bench/adapt.py --methods source,norm,tent,eata,sar --settings continual \
        --per-domain 128 --out docs/adapt_bench.json

Each side runs ``torchnative adapt --json`` in its own process (upstream with the project's src/
on PYTHONPATH), one thread each, one after the other, with the same options.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PY = {"ours": REPO / ".venv/bin/python", "upstream": REPO / ".venv-upstream/bin/python"}


def side(name: str, opts: list[str]) -> list[dict]:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    if name == "upstream":
        env.pop("TORCH_USE_RTLD_GLOBAL", None)
        env["PYTHONPATH"] = str(REPO / "src")
    with tempfile.TemporaryDirectory() as td:
        out = Path(td) / "rows.json"
        proc = subprocess.run([str(PY[name]), "-m", "torchnative.cli", "adapt", "--quiet",
                               "--json", str(out), *opts], env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{name} run failed:\n{proc.stderr[-3000:]}")
        return json.loads(out.read_text())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--methods", default="source,norm,tent,eta,eata,sar,cotta,rotta,lame,memo,ttt")
    ap.add_argument("--settings", default="continual")
    ap.add_argument("--corruptions", default="")
    ap.add_argument("--severity", default="5")
    ap.add_argument("--batch-size", default="64")
    ap.add_argument("--per-domain", default="128")
    ap.add_argument("--arch", default="bn")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    opts = ["--methods", a.methods, "--settings", a.settings, "--severity", a.severity,
            "--batch-size", a.batch_size, "--per-domain", a.per_domain, "--arch", a.arch]
    if a.corruptions:
        opts += ["--corruptions", a.corruptions]
    rows = {s: side(s, opts) for s in ("upstream", "ours")}
    print(f"digits-C ({a.arch}, severity {a.severity}, batch {a.batch_size}, "
          f"{a.per_domain or 'all'} samples per corruption), ours vs upstream 2.13.0:")
    print("| method | setting | error ours (%) | error upstream (%) | delta bytes | deepcopy bytes "
          "| ms/batch ours | ms/batch upstream | ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    for o, u in zip(rows["ours"], rows["upstream"]):
        ratio = o["ms_per_batch"] / u["ms_per_batch"] if u["ms_per_batch"] else float("nan")
        print(f"| {o['method']} | {o['setting']} | {o['error']:.1f} | {u['error']:.1f} | "
              f"{o['delta_bytes']:,} | {o['deepcopy_bytes']:,} | {o['ms_per_batch']:.1f} | "
              f"{u['ms_per_batch']:.1f} | {ratio:.1f}x |")
    if a.out:
        Path(a.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    sys.exit(main())
