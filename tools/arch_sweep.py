"""Architecture sweep: every transformers architecture, tiny and random, built on upstream, run on ours.

For each model type transformers registers, the sweep picks one task class (causal LM first, then
sequence-to-sequence, masked LM, image classification, CTC, audio classification, speech-to-text,
else the base model), derives a tiny config from the config class's defaults
(``tools/arch_configs.py``), and:
- upstream builds it (seed 0), saves it with ``save_pretrained``, runs its main input forward in
  float32 and again in float64 (for the derived tolerance), and greedy-generates 8 tokens where
  the task generates;
- ours loads the saved directory with ``from_pretrained`` (transformers' real loading code) and
  does the same on the same inputs.
Verdicts: agrees (element-wise at the golden harness's derived tolerance, and identical greedy
tokens), diverges, refuses on ours (with the name), not built (upstream rejected the generic tiny
config — a limit of this sweep, with transformers' message), not judged (upstream's float64 rerun
failed, so no tolerance can be derived).

Usage: .venv/bin/python tools/arch_sweep.py [--archs llama,gpt2,...] [--out docs/sweep.md]
       [--chunk 20] [--fresh] [--rerun-ours] [--report-only]
Rows are saved in .cache/sweep/results.json as each batch finishes; a rerun continues from them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / ".cache/sweep"
WORKER = REPO / "tools/arch_worker.py"
UPSTREAM, OURS = REPO / ".venv-upstream/bin/python", REPO / ".venv/bin/python"
# task label, transformers mapping, whether the task generates; first match wins
TASKS = [("causal LM", "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES", True),
         ("seq2seq", "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES", True),
         ("masked LM", "MODEL_FOR_MASKED_LM_MAPPING_NAMES", False),
         ("image classification", "MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES", False),
         ("CTC", "MODEL_FOR_CTC_MAPPING_NAMES", False),
         ("audio classification", "MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES", False),
         ("speech-to-text", "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES", True),
         ("base model", "MODEL_MAPPING_NAMES", False)]


def catalog() -> tuple[dict[str, tuple[str, str, bool]], list[str]]:
    """model type -> (task, class name, generates); and the model types with no task class."""
    from transformers.models.auto import modeling_auto
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    chosen = {}
    for task, mapping, generates in TASKS:
        for model_type, cls in getattr(modeling_auto, mapping).items():
            if model_type not in chosen:
                chosen[model_type] = (task, cls if isinstance(cls, str) else cls[0], generates)
    return chosen, sorted(set(CONFIG_MAPPING_NAMES) - set(chosen))


class Worker:
    """One worker process over a batch of architectures, started now, read when finished."""

    def __init__(self, python: Path, mode: str, batch: list):
        env = None
        if "upstream" in str(python):
            from torchnative.testing.upstream import upstream_env

            env = upstream_env()
        self.mode, self.batch = mode, batch
        # files, not pipes: a worker must never block on output nobody reads yet
        self.out, self.err = tempfile.TemporaryFile("w+"), tempfile.TemporaryFile("w+")
        self.proc = subprocess.Popen([str(python), str(WORKER), mode, str(CACHE),
                                      json.dumps(batch)], stdout=self.out, stderr=self.err,
                                     text=True, env=env)

    def rows(self) -> dict[str, dict]:
        """Rows by architecture; a worker that dies loses only the architecture it was on (the
        rest of its batch is left for the caller to run again)."""
        try:
            self.proc.wait(timeout=len(self.batch) * 700)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.out.seek(0)
        self.err.seek(0)
        out, err = self.out.read(), self.err.read()
        rows = {}
        for line in out.splitlines():
            if line.startswith("{"):
                row = json.loads(line)
                rows[row["arch"]] = row
        missing = [e for e in self.batch if e[0] not in rows]
        if missing:
            tail = err.strip().splitlines()[-1:] or [f"exit {self.proc.returncode}"]
            rows[missing[0][0]] = {"arch": missing[0][0], "ok": False, "error":
                                   f"process died (exit {self.proc.returncode}): {tail[0][:200]}"}
        return rows


def run_side(python: Path, mode: str, todo: list, chunk: int, done: dict) -> None:
    """Run ``todo`` through workers of ``chunk`` architectures until each has a row in ``done``."""
    while todo:
        done.update(Worker(python, mode, todo[:chunk]).rows())
        todo = [e for e in todo if e[0] not in done]


def finish(worker: Worker, ours: dict, chunk: int) -> None:
    """Collect a running worker of ours, rerunning what it left when it died."""
    ours.update(worker.rows())
    run_side(OURS, "load", [e for e in worker.batch if e[0] not in ours], chunk, ours)


def verdict(arch: str, generates: bool, up: dict, ours: dict | None) -> tuple[str, str]:
    from torchnative.testing.golden import compare as cmp, tolerance

    if not up["ok"]:
        return "not built", f"upstream: {up['error']}"
    if ours is None:
        return "not run", "built on upstream; ours has not run it yet (rerun to continue)"
    if not ours["ok"]:
        return "refuses", ours["error"]
    with np.load(CACHE / arch / "upstream.npz") as u, np.load(CACHE / arch / "ours.npz") as o:
        up32, mine = u["output"], o["output"]
        up64 = u["output64"] if "output64" in u.files else None
        same_tokens = None
        if generates and "tokens" in u.files:
            same_tokens = "tokens" in o.files and np.array_equal(u["tokens"], o["tokens"])
    if up32.shape != mine.shape:
        return "diverges", f"output shape {mine.shape} vs upstream {up32.shape}"
    if up64 is None or up64.shape != up32.shape:
        return "not judged", f"upstream float64 rerun: {up.get('float64_error', 'no output')}"
    up32, mine, up64 = (a.astype(np.float32) for a in (up32, mine, up64))
    tol = tolerance.derive([(up32, up64)], "float32")
    problem = cmp.close(up32, mine, up64, 0.0, tol)
    worst = float(np.abs(mine - up32).max()) if mine.size else 0.0
    detail = problem or f"max |diff| {worst:.2e} (rtol {tol.rtol:.2e}, atol {tol.atol:.2e})"
    if problem:
        return "diverges", detail
    if same_tokens is False:
        return "diverges", f"greedy tokens differ; forward {detail}"
    return "agrees", detail + ("; greedy tokens identical" if same_tokens else "")


def sweep(archs: list[str] | None, chunk: int, fresh: bool, rerun_ours: bool,
          report_only: bool = False) -> tuple[list[dict], list[str]]:
    chosen, untasked = catalog()
    order = [t[0] for t in TASKS]  # task heads first: the base-model-only types come last
    names = archs or sorted(chosen, key=lambda a: (order.index(chosen[a][0]), a))
    unknown = [a for a in names if a not in chosen]
    if unknown:
        raise SystemExit(f"not a model type with a task class: {', '.join(unknown)}")
    entries = [[a, chosen[a][1], chosen[a][2]] for a in names]
    CACHE.mkdir(parents=True, exist_ok=True)
    store = CACHE / "results.json"
    saved = {} if fresh or not store.exists() else json.loads(store.read_text())
    up, ours = saved.get("upstream", {}), saved.get("ours", {})
    if rerun_ours:
        ours = {a: row for a, row in ours.items() if a not in names}
    # upstream builds batch k+1 while ours runs batch k: two processes, one per side
    pending = None
    for i in range(0, 0 if report_only else len(entries), chunk):
        batch = entries[i:i + chunk]
        run_side(UPSTREAM, "build", [e for e in batch if e[0] not in up], chunk, up)
        if pending is not None:
            finish(pending, ours, chunk)
        store.write_text(json.dumps({"upstream": up, "ours": ours}))
        built = [e for e in batch if up[e[0]]["ok"] and e[0] not in ours]
        pending = Worker(OURS, "load", built) if built else None
        print(f"built {min(i + chunk, len(entries))}/{len(entries)}", file=sys.stderr,
              flush=True)
    if pending is not None:
        finish(pending, ours, chunk)
    if not report_only:
        store.write_text(json.dumps({"upstream": up, "ours": ours}))
    rows = []
    for arch, cls, generates in entries:
        if arch not in up:
            status, note = "not run", "the sweep has not reached it (rerun to continue)"
        else:
            status, note = verdict(arch, generates, up[arch], ours.get(arch))
        rows.append({"arch": arch, "task": chosen[arch][0], "class": cls, "verdict": status,
                     "note": note})
        print(json.dumps(rows[-1]), flush=True)
    return rows, ([] if archs else untasked)


def markdown(rows: list[dict], untasked: list[str]) -> str:
    counts: dict[str, dict[str, int]] = {}
    for r in rows:
        counts.setdefault(r["task"], {}).setdefault(r["verdict"], 0)
        counts[r["task"]][r["verdict"]] += 1
    kinds = ["agrees", "diverges", "refuses", "not judged", "not built", "not run"]
    lines = ["# Architecture sweep", "",
             "Generated by `.venv/bin/python tools/arch_sweep.py --out docs/sweep.md` (its "
             "docstring says how). Every model type transformers registers with a task class is "
             "built tiny and random on upstream torch 2.13.0 from its config class's defaults "
             "shrunk by rule (`tools/arch_configs.py`), saved with `save_pretrained`, loaded on "
             "ours with `from_pretrained`, and run on the same inputs: the main output is "
             "compared element-wise at the golden harness's derived tolerance (upstream rerun "
             "in float64) and greedy tokens (8) compared token for token where the task "
             "generates. \"not built\" means upstream rejected the generic tiny config — a limit "
             "of the sweep, not of our torch.", "",
             "| task | " + " | ".join(kinds) + " |", "|---|" + "---|" * len(kinds)]
    for task, c in counts.items():
        lines.append(f"| {task} | " + " | ".join(str(c.get(k, 0)) for k in kinds) + " |")
    total = {k: sum(c.get(k, 0) for c in counts.values()) for k in kinds}
    lines.append("| **all** | " + " | ".join(f"**{total[k]}**" for k in kinds) + " |")
    lines += ["", "| architecture | task (class) | verdict | note |", "|---|---|---|---|"]
    for r in rows:
        note = r["note"].replace("|", "\\|")
        lines.append(f"| {r['arch']} | {r['task']} (`{r['class']}`) | {r['verdict']} | {note} |")
    if untasked:
        lines += ["", f"Model types with no class for any task above ({len(untasked)}; "
                  "sub-configs and processor-only entries): " + ", ".join(untasked) + "."]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--archs", help="comma-separated model types (default: all)")
    ap.add_argument("--chunk", type=int, default=20, help="architectures per worker process")
    ap.add_argument("--fresh", action="store_true", help="rebuild upstream's models")
    ap.add_argument("--rerun-ours", action="store_true",
                    help="rerun our side of the selected architectures even where a row from "
                    "an earlier run is saved")
    ap.add_argument("--report-only", action="store_true",
                    help="write the table from the saved rows without running anything")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    rows, untasked = sweep(args.archs.split(",") if args.archs else None, args.chunk, args.fresh,
                           args.rerun_ours, args.report_only)
    md = markdown(rows, untasked)
    print(md)
    if args.out:
        args.out.write_text(md)


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "src"))
    main()
