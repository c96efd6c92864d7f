"""The gradient sweep: upstream's OpInfo samples differentiated on both sides. Imports no torch.

    python -m torchnative.testing.golden grads run --suite full --md docs/gradients.md --jobs 2
    python -m torchnative.testing.golden grads run --suite fast --check-baseline     # the CI subset

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
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, replace
from typing import ClassVar
from pathlib import Path

from torchnative.testing import upstream

import numpy as np

from . import baseline, codec, compare, workers
from .pipeline import (CACHE, cases_dir, fingerprint, load_pair, profile_results, replay_profiles,
                       results_dir, suite_dir)
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
    SOURCES: ClassVar[tuple] = ("codec.py", "calls.py", "naming.py", "generate.py",
                                "grads_worker.py")

    name: str
    ops: tuple[str, ...] = ()      # empty: every OpInfo entry that supports autograd
    dtypes: tuple[str, ...] = ("float32", "float64")
    max_samples: int = 8           # per entry and dtype, evenly spread
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


def manifest(suite: GradSuite) -> dict:
    return json.loads((cases_dir(suite) / "_manifest.json").read_text())


def generate(suite: GradSuite, *, force: bool = False, jobs: int = 1, log=sys.stderr) -> Path:
    """Cases of ``suite`` under .cache/golden/grads-<suite>/cases (reused while the fingerprint holds)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"grads-{suite.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        out = cases_dir(suite)
        path, fp = out / "_manifest.json", fingerprint(suite)
        if not force and path.exists() and json.loads(path.read_text()).get("fingerprint") == fp:
            print(f"[grads] reusing cases in {out}", file=log)
            _profiles(suite, out, jobs, log)
            return out
        if not upstream.available():
            raise RuntimeError(f"upstream interpreter missing: {upstream.UPSTREAM_PYTHON} (run tools/setup.sh)")
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        start = time.time()
        keys = list_keys(suite.ops)
        args = ["generate", "--out", str(out), "--dtypes", ",".join(suite.dtypes), "--max-samples",
                str(suite.max_samples), "--checks", str(suite.checks), "--seed", str(suite.seed)]
        failures = workers.run_keys(upstream.UPSTREAM_PYTHON, "grads_worker", args, keys,
                                    lambda k: (out / f"{k}.json").exists(), chunk=60,
                                    per_key=SECONDS_PER_KEY, jobs=jobs, log=log)
        path.write_text(json.dumps({
            "fingerprint": fp, "suite": suite.params(), "keys": keys, "failures": failures,
            "upstream_python": str(upstream.UPSTREAM_PYTHON), "seconds": round(time.time() - start, 1),
            "created": time.strftime("%Y-%m-%d %H:%M:%S")}, indent=1))
        _profiles(suite, out, jobs, log)
        return out


def _profiles(suite: GradSuite, out: Path, jobs: int, log) -> None:
    keys = [k for k in manifest(suite)["keys"] if (out / f"{k}.json").exists()]
    replay_profiles(suite, "grads_worker", ["replay", "--cases", str(out)], keys,
                    per_key=SECONDS_PER_KEY, jobs=jobs, log=log)


def replay(suite: GradSuite, python: str, label: str, *, jobs: int = 1, keys=None, log=sys.stderr) -> Path:
    """Ours' results for the cases of ``suite`` (all, or ``keys``) under results/<label>."""
    src, out = cases_dir(suite), results_dir(suite, label)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    start = time.time()
    keys = [k for k in (keys or manifest(suite)["keys"]) if (src / f"{k}.json").exists()]
    failures = workers.run_keys(python, "grads_worker", ["replay", "--cases", str(src), "--out", str(out)],
                                keys, lambda k: (out / f"{k}.json").exists(), chunk=40,
                                per_key=SECONDS_PER_KEY, jobs=jobs, log=log)
    for key, why in failures.items():  # a crash is a result too: every case of the entry diverges
        (out / f"{key}.json").write_text(json.dumps({"key": key, "crashed": why}))
    (out / "_run.json").write_text(json.dumps({"python": str(python), "label": label, "keys": keys,
                                               "seconds": round(time.time() - start, 1), "crashed": failures}))
    return out


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
        else:
            mine, mine_arrays = {"crashed": "no result file"}, {}
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
    for doc, sample, case, v, ours, fn_diff in verdicts:
        docs[doc["key"]] = doc
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
    by_kind = {k: dict(Counter(row_status(r["counts"]) for r in rows.values() if r["kind"] == k)) for k in KINDS}
    totals = {"entries": len(man["keys"]), "entries_with_cases": len(man["keys"]) - len(no_cases),
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
            "skipped": skipped, "no_cases": no_cases, "cases": cases, "tolerances": tols}


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
        f"{', '.join(s['dtypes'])} (those the entry's backward supports); at most {s['max_samples']} samples "
        f"per entry and dtype; gradcheck on the first {s['checks']} float64 samples; seed {s['seed']}",
        f"- cases {m['cases']['fingerprint']} generated {m['cases']['created']} in {m['cases']['seconds']} s", "",
        "Kinds of case (one per sample, the entry's first nameable non-in-place spelling):", "",
        "- `grad`: the differentiable outputs, and `torch.autograd.grad` of them w.r.t. every input "
        "requiring grad for a seeded random cotangent (value, shape, dtype, None-ness, raised-or-not)",
        "- `gradgrad` (entries with `supports_gradgrad`): grad of sum(vjp * v), v random, w.r.t. the inputs "
        "and the cotangents (create_graph=True)",
        "- `gradcheck` / `gradgradcheck`: ours passes `torch.autograd.gradcheck` / `gradgradcheck` in "
        "float64 (fast_mode, upstream's OpInfo nondet_tol, check_undefined_grad, no batched grad); "
        "`errors-as-upstream` there means upstream fails the same sample", "",
        "## Totals", "",
        f"OpInfo entries supporting autograd: {t['entries']} ({t['entries_with_cases']} with cases). "
        f"Samples: {t['samples_all']} in those entries' float32/float64 sample sets; {t['samples_attempted']} "
        f"attempted; {t['samples_agreeing']} agreeing in every kind ({pct(t['samples_agreeing'], t['samples_attempted'])}).", "",
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
        generate(suite, force=a.force, jobs=a.jobs)
        print(f"[grads] generate: {time.perf_counter() - start:.1f}s")
    if a.command in ("replay", "run"):
        start = time.perf_counter()
        replay(suite, python, label, jobs=a.jobs)
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
