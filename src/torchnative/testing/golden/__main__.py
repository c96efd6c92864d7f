"""python -m torchnative.testing.golden generate|replay|report|self-test|run|grads  (see __init__.py)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import shlex
import sys
import time
from pathlib import Path

from torchnative.testing import upstream

from . import baseline, pipeline, report, selftest, workers
from .subsets import SUITES


def suite_of(a):
    suite = SUITES[a.suite]
    over = {k: v for k, v in (("ops", a.ops), ("dtypes", a.dtypes)) if v is not None}
    over.update({k: v for k, v in (("max_samples", a.max_samples), ("max_dtypes", a.max_dtypes),
                                   ("seed", a.seed)) if v is not None})
    if over:  # a custom selection gets its own cache directory
        over = {k: tuple(x for x in v.split(",") if x) if k in ("ops", "dtypes") else v for k, v in over.items()}
        suite = dataclasses.replace(suite, name=a.name or f"{a.suite}-custom", **over)
    return suite


def ours_python(a) -> str:
    if a.ours_python == "upstream":
        return str(upstream.UPSTREAM_PYTHON)
    return a.ours_python or upstream.ours_python()


def label_of(a) -> str:
    return a.label or ("upstream-self" if a.ours_python == "upstream" else "ours")


def do_report(a, suite) -> int:
    label = label_of(a)
    rep = report.build(suite, label, pipeline.judge_all(suite, label))
    base = pipeline.suite_dir(suite)
    (base / f"report-{label}.json").write_text(json.dumps(rep, indent=1, default=list))
    command = "python -m torchnative.testing.golden " + " ".join(shlex.quote(x) for x in sys.argv[1:])
    md = report.markdown(rep, command)
    (base / f"agreement-{label}.md").write_text(md)
    if a.md:
        Path(a.md).write_text(md)
    t = rep["totals"]
    print(f"[golden] {suite.name}/{label}: samples agreeing {t['samples_agreeing']}/{t['samples_attempted']} "
          f"attempted, {t['samples_all']} all; cases {t['cases']}; rows {t['rows']}")
    print(f"[golden] report: {base / f'report-{label}.json'}  markdown: {a.md or base / f'agreement-{label}.md'}")
    code = 0
    if a.strict and t["cases"].keys() - set(report.GOOD):
        print("[golden] --strict: some cases do not agree", file=sys.stderr)
        code = 1
    if a.check_baseline:
        problems = baseline.check(rep)
        for p in problems:
            print(f"[golden] baseline regression: {p}", file=sys.stderr)
        code = code or (1 if problems else 0)
    if a.update_baseline:
        added, dropped = baseline.update(rep, allow_drop=a.allow_drop)
        print(f"[golden] baseline: {len(added)} rows added, {len(dropped)} dropped")
    return code


def do_selftest(a, suite) -> int:
    start = time.perf_counter()
    cases = pipeline.cases_dir(suite) if a.real else None
    problems = selftest.run(cases)
    for p in problems:
        print(f"[golden] self-test: {p}", file=sys.stderr)
    n_faults = sum(f.catches is not None or f.status is not None for f in selftest.FAULTS)
    print(f"[golden] self-test {'FAILED' if problems else 'passed'}: {n_faults} synthetic faults, "
          f"{len(selftest.FAULTS) - n_faults} controls, {len(selftest.compare.COMPARATORS)} comparators"
          f"{' + real cases of ' + suite.name if cases else ''} in {time.perf_counter() - start:.2f}s")
    return 1 if problems else 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["grads"]:  # the gradient sweep has its own options (grads.py)
        from . import grads
        return grads.main(argv[1:])
    ap = argparse.ArgumentParser(prog="python -m torchnative.testing.golden", description=__doc__)
    ap.add_argument("command", choices=("generate", "replay", "report", "self-test", "run", "census"))
    ap.add_argument("--suite", default="fast", choices=sorted(SUITES))
    ap.add_argument("--ops", help="comma-separated OpInfo names (overrides the suite's)")
    ap.add_argument("--dtypes", help="comma-separated dtypes; '' = all supported (overrides the suite's)")
    ap.add_argument("--max-samples", type=int)
    ap.add_argument("--max-dtypes", type=int)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--name", help="cache name of a custom selection")
    ap.add_argument("--ours-python", help="interpreter for ours ('upstream' = the comparison env itself)")
    ap.add_argument("--label", help="name of this replay's results (default: ours / upstream-self)")
    ap.add_argument("--jobs", type=int, default=1, help="parallel worker processes (machines are shared)")
    ap.add_argument("--force", action="store_true", help="regenerate cases even if the cache is current")
    ap.add_argument("--md", help="also write the markdown report here (e.g. docs/agreement.md)")
    ap.add_argument("--strict", action="store_true", help="exit 1 unless every case agrees")
    ap.add_argument("--check-baseline", action="store_true", help="exit 1 if a baseline row regressed")
    ap.add_argument("--update-baseline", action="store_true", help="add agreeing rows to the baseline")
    ap.add_argument("--allow-drop", action="store_true", help="with --update-baseline: drop regressed rows")
    ap.add_argument("--real", action="store_true", help="self-test: also inject faults into stored cases")
    ap.add_argument("--shard", help="generate: only the K-th of N parts of the entries (K/N), resuming what "
                    "is there; replay and report then cover the entries generated so far")
    ap.add_argument("--skip-profiles", action="store_true",
                    help="generate: no reruns under other CPU profiles (stricter verdicts; saves time)")
    ap.add_argument("--resume", action="store_true",
                    help="replay: keep the entries an earlier replay finished (ours could rebuild every "
                    "sample); replay the rest")
    a = ap.parse_args(argv)
    suite = suite_of(a)
    if a.command == "census":  # how samples would reach ours under --max-samples (census.py)
        code, out = workers.run(upstream.UPSTREAM_PYTHON, "census", [
            "--max-samples", str(a.max_samples or 0), "--max-dtypes", str(suite.max_dtypes),
            "--seed", str(suite.seed)], timeout=7200, capture="stdout")
        print(out)
        return 0 if code == 0 else 1
    if a.command == "self-test":
        return do_selftest(a, suite)
    if a.command in ("generate", "run"):
        start = time.perf_counter()
        pipeline.generate(suite, force=a.force, jobs=a.jobs, shard=a.shard, profiles=not a.skip_profiles)
        print(f"[golden] generate: {time.perf_counter() - start:.1f}s")
    if a.command in ("replay", "run"):
        start = time.perf_counter()
        pipeline.replay(suite, ours_python(a), label_of(a), jobs=a.jobs, resume=a.resume)
        print(f"[golden] replay ({ours_python(a)}): {time.perf_counter() - start:.1f}s")
    if a.command in ("report", "run"):
        return do_report(a, suite)
    return 0


if __name__ == "__main__":
    sys.exit(main())
