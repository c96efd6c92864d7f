"""The gradient sweep: upstream's OpInfo samples differentiated on both sides. Imports no torch.

    python -m torchnative.testing.golden grads run --suite full --md docs/gradients.md --jobs 2
    python -m torchnative.testing.golden grads run --suite fast --check-baseline     # the CI subset

The full suite takes every sample (grad and gradgrad; gradcheck on the first float64 ones) and is
long: it runs in parts as the forward sweep does (pipeline.py), each part resuming what is there:

    python -m torchnative.testing.golden grads generate --suite full --jobs 2 --shard K/N
    python -m torchnative.testing.golden grads replay --suite full --jobs 2 --resume
    python -m torchnative.testing.golden grads report --suite full --md docs/gradients.md

Built on the forward harness: grads_worker.py makes and replays the cases (codec, calls, naming and
generate's helpers), workers.py runs it, tolerance.py derives each entry's tolerances per case kind
from upstream's own float32-vs-float64 gradients, and compare.judge judges a grad/gradgrad case as
it judges a forward one: raised-or-not and the exception type, structure (a None gradient where
upstream has one is a structure difference), dtype, shape, non-finite positions, and values.
gradcheck/gradgradcheck cases are ours' pass/fail (upstream's own result on the sample beside it).
Rows are ``entry|kind|spelling`` with kind grad, gradgrad, gradcheck, gradgradcheck; statuses as
report.py's. Tolerances: see GradTolerances. The grad_fn name of each output is compared and reported but is not part of a verdict.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import shlex
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, replace
from typing import ClassVar
from pathlib import Path

from torchnative.testing import upstream

import numpy as np

from . import baseline, codec, compare, pipeline, workers
from .pipeline import (CACHE, UNJUDGED, cases_dir, load_pair, manifest, profile_results, replay_profiles,
                       results_dir, suite_dir, unjudged)
from .report import GOOD, STATUSES, pct, rel, row_id, row_status
from .tolerance import OpTolerances, Tol

BASELINE = upstream.REPO / "tests" / "golden_grads_baseline.json"
KINDS = ("grad", "gradgrad", "gradcheck", "gradgradcheck")
SECONDS_PER_KEY = 300

# The norms, embedding, attention and losses a transformer trains through, and the ops around them.
FAST_OPS = (
    "nn.functional.layer_norm", "nn.functional.rms_norm", "nn.functional.group_norm",
    "nn.functional.batch_norm", "nn.functional.embedding", "nn.functional.scaled_dot_product_attention",
    "nn.functional.cross_entropy", "nn.functional.nll_loss", "nn.functional.mse_loss",
    "softmax", "log_softmax", "nn.functional.gelu", "nn.functional.silu", "nn.functional.relu",
    "nn.functional.linear", "nn.functional.dropout", "matmul", "mm", "bmm", "addmm",
    "add", "sub", "mul", "div", "exp", "log", "tanh", "sigmoid", "rsqrt", "pow", "sum", "mean", "amax",
    "cat", "stack", "reshape", "transpose", "permute", "unsqueeze", "index_select", "gather",
    "masked_fill", "where", "tril", "cumsum", "clamp",
)


@dataclass(frozen=True)
class GradSuite:
    CACHE_PREFIX: ClassVar[str] = "grads-"
    SOURCES: ClassVar[tuple] = ("codec.py", "calls.py", "naming.py", "generate.py", "live.py",
                                "replay.py", "grads_worker.py")

    name: str
    ops: tuple[str, ...] = ()      # empty: every OpInfo entry that supports autograd
    dtypes: tuple[str, ...] = ("float32", "float64")
    max_samples: int = 0           # per entry and dtype, evenly spread; 0: every sample
    checks: int = 2                # float64 samples per entry that gradcheck/gradgradcheck run on
    seed: int = 0

    def params(self) -> dict:
        return asdict(self)


SUITES = {"fast": GradSuite("fast", FAST_OPS, max_samples=3, checks=1), "full": GradSuite("full")}


def list_keys(ops: tuple[str, ...]) -> list[str]:
    """OpInfo keys of entries that support autograd, asked of upstream's database."""
    proc = subprocess.run(workers.command(upstream.UPSTREAM_PYTHON, "grads_worker", "list", "--ops", ",".join(ops)),
                          capture_output=True, text=True, env=workers.worker_env(upstream.UPSTREAM_PYTHON),
                          timeout=600)
    if proc.returncode != 0:
        raise upstream.failure("listing OpInfo entries", proc.returncode, proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def generate(suite: GradSuite, *, force: bool = False, jobs: int = 1, log=sys.stderr, shard: str | None = None,
             profiles: bool = True) -> Path:
    """Cases of ``suite`` under .cache/golden/grads-<suite>/cases, made, sharded and resumed by the
    forward sweep's pipeline._generate (reused while the fingerprint holds). ``profiles=False``
    skips upstream's reruns under the other CPU profiles (stricter verdicts, never laxer)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"grads-{suite.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        worker = ["generate", "--dtypes", ",".join(suite.dtypes), "--max-samples", str(suite.max_samples),
                  "--checks", str(suite.checks), "--seed", str(suite.seed)]
        out = pipeline._generate(suite, force, jobs, log, shard, worker=("grads_worker", worker),
                                 list_keys=list_keys, chunk=60)
        if profiles:
            _profiles(suite, out, jobs, log)
        return out


def _profiles(suite: GradSuite, out: Path, jobs: int, log) -> None:
    keys = [k for k in manifest(suite)["keys"] if (out / f"{k}.json").exists()]
    replay_profiles(suite, "grads_worker", ["replay", "--cases", str(out)], keys,
                    per_key=SECONDS_PER_KEY, jobs=jobs, log=log)


def replay(suite: GradSuite, python: str, label: str, *, jobs: int = 1, keys=None, log=sys.stderr,
           resume: bool = False) -> Path:
    """Ours' results for the cases of ``suite`` (all, or ``keys``) under results/<label>
    (pipeline.replay: ``resume`` keeps the entries an earlier replay finished)."""
    return pipeline.replay(suite, python, label, jobs=jobs, log=log, resume=resume,
                           worker=("grads_worker", ["replay"]), keys=keys)


# ---------------------------------------------------------------------------------------------- judge

class GradTolerances(OpTolerances):
    """tolerance.OpTolerances of one entry and case kind, plus a normwise allowance.

    A gradient is a contraction with the cotangent: its rounding error is bounded relative to the
    magnitude of the terms summed, i.e. normwise (relative to the output's largest element), not
    elementwise, and ours composes derivatives.yaml's formulas where upstream often runs one fused
    kernel, so the summation order differs. Accepted besides the elementwise tolerance: upstream's
    own typical normwise error, the median over this kind's outputs of max|low - high| / max|high|
    (the median, not a high percentile: a few outputs that nearly cancel out (a layer norm over two
    elements) would otherwise set the allowance for all; low = in the
    sample's dtype, high = the float64 rerun; float64 samples: their float32 rerun, scaled in ulps),
    leaving out outputs of which upstream's own result has no correct digit (error >= magnitude).
    """

    def __call__(self, dtype: str) -> Tol:
        if dtype not in self.cache:
            t = super().__call__(dtype)
            nw = self.normwise(dtype)
            self.cache[dtype] = Tol(t.rtol, t.atol, t.source + f"; normwise median {nw:.3g}", t.n,
                                    max(t.normwise, nw))
        return self.cache[dtype]

    def normwise(self, dtype: str) -> float:
        narrowed = f"{codec.NARROW.get(dtype)}<{dtype}"
        src, scale = dtype, 1.0
        if dtype not in self.pairs and narrowed in self.pairs:
            src = narrowed
            scale = codec.finfo(dtype)[0] / codec.finfo(codec.NARROW[dtype])[0]
        ratios = []
        for low, high in self.pairs.get(src, []):
            fin = np.isfinite(low) & np.isfinite(high)
            top = float(np.max(np.abs(high), where=fin, initial=0.0))
            err = float(np.max(np.abs(low - high), where=fin, initial=0.0))
            if err < top:  # an output upstream gets no digit of (all cancellation) is atol's business
                ratios.append(err / top)
        return scale * float(np.median(ratios)) if ratios else 0.0


def tolerances(doc: dict, arrays: dict) -> dict:
    """Per case kind, GradTolerances over upstream's own reruns of that kind's cases."""
    samples = {s["id"]: s for s in doc["samples"]}
    out = {}
    for kind in ("grad", "gradgrad"):
        cases = [c for c in doc["cases"] if c["variant"] == kind]
        refs = [{"id": c["id"], "dtype": samples[c["sample"]]["dtype"], "ref_case": c["id"],
                 "random": samples[c["sample"]]["random"], "high": c.get("high"), "narrow": c.get("narrow")}
                for c in cases]
        out[kind] = GradTolerances({"samples": refs, "cases": cases}, arrays)
    return out


def judge_check(case: dict, ours: dict | None) -> compare.Verdict:
    """gradcheck/gradgradcheck: ours must pass where upstream passes."""
    up, v = case["upstream"], compare.Verdict()
    up_pass = up["ok"] and up["value"].get("v") is True
    if ours is None:
        v.status, v.failures["outcome"] = "diverges", "no result (worker crashed or timed out)"
    elif not ours["ok"] and ours["exc"].get("refusal"):
        v.status = "refuses"
        v.notes.append(ours["exc"]["message"][:200])
    elif ours["ok"] and ours["value"].get("v") is True:
        if not up_pass:
            v.notes.append("passes where upstream fails: " + (up.get("message") or up.get("exc", {}).get("message", ""))[:160])
    elif not up_pass:
        v.status = "errors-as-upstream"
    else:
        v.status = "diverges"
        why = (ours.get("message") or "failed") if ours["ok"] else \
            "raised {type} ({phase}): {message}".format(**ours["exc"])
        v.failures[case["variant"]] = why[:300].replace("\n", " ")
    return v


def judge_all(suite: GradSuite, label: str, keys=None):
    """Yield (case-file doc, sample, case, verdict, ours' record, grad_fn difference or None)."""
    src, res = cases_dir(suite), results_dir(suite, label)
    for key in keys or manifest(suite)["keys"]:
        if not (src / f"{key}.json").exists():
            continue
        doc, arrays = load_pair(src, key)
        if (res / f"{key}.json").exists():
            mine, mine_arrays = load_pair(res, key)
        else:  # a crash leaves a file saying so (replay); no file: the replay has not reached it
            mine, mine_arrays = {"unreplayed": True}, {}
        tols = tolerances(doc, arrays)
        others = profile_results(suite, key)
        samples = {s["id"]: s for s in doc["samples"]}
        failed = mine.get("import_error") or mine.get("op_error")
        if failed:
            failed = {"type": f"{failed['type']} before the call", "mro": [], "phase": failed["phase"],
                      "message": f"{failed['phase']} failed: {failed['message']}", "refusal": False}
        op = {"name": f"gradient of {doc['name']}", "family": "gradient"}  # no tie or zero-sign rules
        for case in doc["cases"]:
            sample = samples[case["sample"]]
            ours = mine.get("results", {}).get(case["id"])
            if ours is None and failed:
                ours = {"ok": False, "exc": failed}
            skipped = unjudged(case, ours, mine.get("unreplayed", False))
            if skipped is not None:
                yield doc, sample, case, skipped, ours, None
                continue
            if case["variant"] in ("gradcheck", "gradgradcheck"):
                yield doc, sample, case, judge_check(case, ours), ours, None
                continue
            view = {"id": sample["id"], "dtype": sample["dtype"], "args": [], "kwargs": {},
                    "random": sample["random"], "high": case.get("high"), "narrow": case.get("narrow")}
            c = compare.Case(op, view, case, arrays, mine_arrays, tols[case["variant"]],
                             compare.other_results(others, case["id"]))
            v = compare.judge(c, ours)
            fn_diff = None
            if case["variant"] == "grad" and ours and ours.get("ok") and case["upstream"].get("ok") \
                    and ours.get("grad_fn") != case["upstream"].get("grad_fn"):
                fn_diff = f"{ours.get('grad_fn')} where upstream has {case['upstream'].get('grad_fn')}"
            yield doc, sample, case, v, ours, fn_diff


# ---------------------------------------------------------------------------------------------- report

def build(suite: GradSuite, label: str, verdicts) -> dict:
    rows: dict[str, dict] = {}
    sample_ok: dict[tuple, bool] = {}
    cases, docs, tols = [], {}, {}
    not_judged: dict[tuple, str] = {}
    for doc, sample, case, v, ours, fn_diff in verdicts:
        docs[doc["key"]] = doc
        if v.status in UNJUDGED:  # not attempted, with the reason (pipeline.unjudged)
            not_judged[(doc["key"], sample["id"])] = f"{v.status}: {v.notes[0] if v.notes else ''}"[:160]
            cases.append({"key": doc["key"], "case": case["id"], "sample": sample["id"], "dtype": sample["dtype"],
                          "kind": case["variant"], "status": v.status, "notes": v.notes})
            continue
        rid = row_id(doc["key"], case["variant"], case["fn"])
        row = rows.setdefault(rid, {"id": rid, "key": doc["key"], "kind": case["variant"], "fn": case["fn"],
                                    "counts": Counter(), "dtypes": set(), "first_problem": "",
                                    "grad_fn": ""})
        row["counts"][v.status] += 1
        row["dtypes"].add(sample["dtype"])
        if v.status not in GOOD and not row["first_problem"]:
            row["first_problem"] = "; ".join(f"{k}: {m}" for k, m in v.failures.items()) or "; ".join(v.notes)
        if fn_diff and not row["grad_fn"]:
            row["grad_fn"] = fn_diff
        skey = (doc["key"], sample["id"])
        sample_ok[skey] = sample_ok.get(skey, True) and v.status in GOOD
        cases.append({"key": doc["key"], "case": case["id"], "sample": sample["id"], "dtype": sample["dtype"],
                      "kind": case["variant"], "status": v.status,
                      **({"failures": v.failures} if v.failures else {}), **({"notes": v.notes} if v.notes else {}),
                      **({"grad_fn": fn_diff} if fn_diff else {})})
    man = manifest(suite)
    samples_all, skipped, no_cases = 0, {}, []
    for key in man["keys"]:
        path = cases_dir(suite) / f"{key}.json"
        if not path.exists():
            continue
        doc = docs.get(key) or json.loads(path.read_text())
        samples_all += sum(t["all"] for t in doc["totals"].values())
        if doc["skipped"]:
            skipped[key] = doc["skipped"]
        if not doc["cases"]:
            no_cases.append(key)
    run = json.loads((results_dir(suite, label) / "_run.json").read_text())
    unjudged_samples = {k: why for k, why in not_judged.items() if k not in sample_ok}
    by_kind = {k: dict(Counter(row_status(r["counts"]) for r in rows.values() if r["kind"] == k)) for k in KINDS}
    totals = {"entries": man.get("entries_selected", len(man["keys"])), "entries_generated": len(man["keys"]),
              "complete": man.get("complete", True),
              "entries_with_cases": len(man["keys"]) - len(no_cases),
              "samples_unjudged": dict(Counter(why.split(":", 1)[0] for why in unjudged_samples.values())),
              "samples_all": samples_all, "samples_attempted": len(sample_ok),
              "samples_agreeing": sum(sample_ok.values()), "cases": dict(Counter(c["status"] for c in cases)),
              "rows": dict(Counter(row_status(r["counts"]) for r in rows.values())), "rows_by_kind": by_kind,
              "grad_fn_rows_differing": sum(bool(r["grad_fn"]) for r in rows.values())}
    return {"meta": {"suite": suite.params(), "label": label, "ours": run, "created": time.strftime("%Y-%m-%d %H:%M"),
                     "cases": {k: man[k] for k in ("fingerprint", "created", "seconds", "upstream_python")},
                     "generation_failures": man["failures"]},
            "totals": totals,
            "rows": [dict(r, status=row_status(r["counts"]), counts=dict(r["counts"]), dtypes=sorted(r["dtypes"]))
                     for r in rows.values()],
            "skipped": skipped, "no_cases": no_cases, "cases": cases, "tolerances": tols,
            "unjudged": {f"{k}|{sid}": why for (k, sid), why in sorted(unjudged_samples.items())}}


def markdown(rep: dict, command: str) -> str:
    t, m = rep["totals"], rep["meta"]
    s = m["suite"]
    out = [
        "# Gradients: agreement with upstream torch 2.13.0", "",
        f"Generated by `{command}` on {m['created']}; do not edit by hand. Upstream's OpInfo samples "
        "(made with `requires_grad=True`) are differentiated on upstream in its own interpreter, replayed "
        "on ours in another and judged in a third (`src/torchnative/testing/golden/grads.py`, "
        "`grads_worker.py`).", "",
        f"- ours: `{rel(m['ours']['python'])}` (label `{m['label']}`); replay took {m['ours']['seconds']} s",
        f"- suite `{s['name']}`: {', '.join(s['ops']) or 'every OpInfo entry that supports autograd'}; dtypes "
        f"{', '.join(s['dtypes'])} (those the entry's backward supports); "
        + (f"at most {s['max_samples']} samples per entry and dtype" if s["max_samples"] else "every sample")
        + f"; gradcheck on the first {s['checks']} float64 samples; seed {s['seed']}",
        f"- cases {m['cases']['fingerprint']} generated {m['cases']['created']} in {m['cases']['seconds']} s", "",
        "Kinds of case (one per sample, the entry's first nameable non-in-place spelling):", "",
        "- `grad`: the differentiable outputs, and `torch.autograd.grad` of them w.r.t. every input "
        "requiring grad for a seeded random cotangent (value, shape, dtype, None-ness, raised-or-not)",
        "- `gradgrad` (entries with `supports_gradgrad`): grad of sum(vjp * v), v random, w.r.t. the inputs "
        "and the cotangents (create_graph=True)",
        "- `gradcheck` / `gradgradcheck`: ours passes `torch.autograd.gradcheck` / `gradgradcheck` in "
        "float64 (fast_mode, upstream's OpInfo nondet_tol, check_undefined_grad, no batched grad); "
        "`errors-as-upstream` there means upstream fails the same sample", "",
        "## Totals", ""]
    if not t.get("complete", True):
        out += [f"**Partial run**: cases of {t['entries_generated']} of the {t['entries']} entries generated so "
                "far; the totals below cover those. To finish it (each command resumes what is there):", "",
                "    nice -n 10 .venv/bin/python -m torchnative.testing.golden grads generate --suite "
                f"{s['name']} --jobs 2 --shard K/N      # every K of one N",
                f"    nice -n 10 .venv/bin/python -m torchnative.testing.golden grads replay --suite {s['name']} "
                "--jobs 2 --resume",
                f"    .venv/bin/python -m torchnative.testing.golden grads report --suite {s['name']} "
                "--md docs/gradients.md", ""]
    out += [
        f"OpInfo entries supporting autograd: {t['entries']} ({t['entries_with_cases']} with cases). "
        f"Samples: {t['samples_all']} in those entries' float32/float64 sample sets; {t['samples_attempted']} "
        f"attempted ({pct(t['samples_attempted'], t['samples_all'])}); {t['samples_agreeing']} agreeing in every "
        f"kind ({pct(t['samples_agreeing'], t['samples_attempted'])} of those attempted, "
        f"{pct(t['samples_agreeing'], t['samples_all'])} of all)."
        + ("" if not t["samples_unjudged"] else " Not judged (inputs ours could not rebuild bit for bit, or not "
           "replayed yet): " + ", ".join(f"{k} {n}" for k, n in sorted(t["samples_unjudged"].items())) + "."), "",
        "| rows (entry x kind) | " + " | ".join(STATUSES) + " |", "|---|" + "---:|" * len(STATUSES)]
    for kind, counts in t["rows_by_kind"].items():
        out.append(f"| {kind} | " + " | ".join(str(counts.get(x, 0)) for x in STATUSES) + " |")
    out.append("| all | " + " | ".join(str(t["rows"].get(x, 0)) for x in STATUSES) + " |")
    out += ["", "Cases: " + ", ".join(f"{x} {t['cases'].get(x, 0)}" for x in STATUSES) + ". "
            f"Rows whose grad_fn names differ from upstream's (not part of the verdicts): {t['grad_fn_rows_differing']}.",
            "", "## By op", "",
            "| OpInfo entry | kind | status | agree / cases | dtypes | first problem | grad_fn (ours vs upstream) |",
            "|---|---|---|---:|---|---|---|"]
    for r in sorted(rep["rows"], key=lambda r: (r["key"], KINDS.index(r["kind"]))):
        good = r["counts"].get("agrees", 0) + r["counts"].get("errors-as-upstream", 0)
        problem = r["first_problem"].replace("|", "\\|").replace("\n", " ")[:180]
        out.append(f"| {r['key']} | {r['kind']} | {r['status']} | {good}/{sum(r['counts'].values())} | "
                   f"{', '.join(r['dtypes'])} | {problem} | {r['grad_fn'].replace('|', '/')[:120]} |")
    out += ["", "## Not attempted", ""]
    if rep["no_cases"]:
        out.append("Entries without cases (see the reasons below): " + ", ".join(sorted(rep["no_cases"])) + ".")
    for key, why in sorted(rep["skipped"].items()):
        out.append(f"- {key}: " + "; ".join(f"{w} ({n})" for w, n in why.items()))
    if m["generation_failures"]:
        out.append("- generation failed for: " + ", ".join(sorted(m["generation_failures"])))
    out += ["", "Values are judged by the forward harness's comparators (`compare.py`) with tolerances derived "
            "per entry and kind from upstream's own gradients rerun in float64 (float32 samples) or float32 "
            "(float64 samples, carried over in ulps) by `tolerance.py`."]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------- CLI

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m torchnative.testing.golden grads", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("generate", "replay", "report", "run"))
    ap.add_argument("--suite", default="fast", choices=sorted(SUITES))
    ap.add_argument("--ops", help="comma-separated OpInfo names (a custom selection, own cache)")
    ap.add_argument("--max-samples", type=int)
    ap.add_argument("--checks", type=int)
    ap.add_argument("--ours-python", help="interpreter for ours ('upstream' = the comparison env itself)")
    ap.add_argument("--label")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--md", help="also write the markdown report here (e.g. docs/gradients.md)")
    ap.add_argument("--check-baseline", action="store_true")
    ap.add_argument("--update-baseline", action="store_true")
    ap.add_argument("--allow-drop", action="store_true")
    ap.add_argument("--shard", help="generate: only the K-th of N parts of the entries (K/N), resuming what "
                    "is there; replay and report then cover the entries generated so far")
    ap.add_argument("--skip-profiles", action="store_true",
                    help="generate: no reruns under other CPU profiles (stricter verdicts; saves time)")
    ap.add_argument("--resume", action="store_true",
                    help="replay: keep the entries an earlier replay finished; replay the rest")
    a = ap.parse_args(argv)
    suite = SUITES[a.suite]
    over = {k: v for k, v in (("max_samples", a.max_samples), ("checks", a.checks)) if v is not None}
    if a.ops:
        over["ops"] = tuple(x for x in a.ops.split(",") if x)
    if over:
        suite = replace(suite, name=f"{a.suite}-custom", **over)
    python = str(upstream.UPSTREAM_PYTHON) if a.ours_python == "upstream" else (a.ours_python or upstream.ours_python())
    label = a.label or ("upstream-self" if a.ours_python == "upstream" else "ours")
    if a.command in ("generate", "run"):
        start = time.perf_counter()
        generate(suite, force=a.force, jobs=a.jobs, shard=a.shard, profiles=not a.skip_profiles)
        print(f"[grads] generate: {time.perf_counter() - start:.1f}s")
    if a.command in ("replay", "run"):
        start = time.perf_counter()
        replay(suite, python, label, jobs=a.jobs, resume=a.resume)
        print(f"[grads] replay ({python}): {time.perf_counter() - start:.1f}s")
    if a.command not in ("report", "run"):
        return 0
    rep = build(suite, label, judge_all(suite, label))
    base = suite_dir(suite)
    (base / f"report-{label}.json").write_text(json.dumps(rep, indent=1, default=list))
    md = markdown(rep, "python -m torchnative.testing.golden grads " + " ".join(shlex.quote(x) for x in (argv or sys.argv[2:])))
    (base / f"gradients-{label}.md").write_text(md)
    if a.md:
        Path(a.md).write_text(md)
    t = rep["totals"]
    print(f"[grads] {suite.name}/{label}: samples agreeing {t['samples_agreeing']}/{t['samples_attempted']}; "
          f"rows {t['rows']}; by kind {t['rows_by_kind']}")
    code = 0
    if a.check_baseline:
        problems = baseline.check(rep, BASELINE)
        for p in problems:
            print(f"[grads] baseline regression: {p}", file=sys.stderr)
        code = 1 if problems else 0
    if a.update_baseline:
        added, dropped = baseline.update(rep, BASELINE, allow_drop=a.allow_drop)
        print(f"[grads] baseline: {len(added)} rows added, {len(dropped)} dropped")
    return code
