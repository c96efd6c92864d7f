"""Verdicts -> the machine-readable report (JSON) and docs/agreement.md.

Statuses, per case and per row (an OpInfo entry called through one spelling):
  agrees              computed, and every comparator accepted ours' result
  errors-as-upstream  upstream raised, ours raised the same type (or a subclass)
  refuses             ours raised TorchnativeNotImplementedError (declined by name)
  diverges            anything else: wrong values, wrong error, computed where upstream raised, crash
A row diverges if any case does; else refuses if any case does. A sample agrees when all its cases do.
Cases in pipeline.UNJUDGED (inputs ours could not regenerate bit for bit, results that cannot travel)
are not judged: they count as not attempted, with their reason.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict

from torchnative.testing import upstream

from . import codec, compare
from .pipeline import UNJUDGED, cases_dir, manifest, results_dir
from .subsets import Suite
from .tolerance import FLOOR_ULPS, PERCENTILE

STATUSES = ("agrees", "errors-as-upstream", "refuses", "diverges")
GOOD = ("agrees", "errors-as-upstream")


def row_id(key: str, variant: str, fn: str) -> str:
    return f"{key}|{variant}|{fn}"


def row_status(counts: Counter) -> str:
    if counts["diverges"]:
        return "diverges"
    if counts["refuses"]:
        return "refuses"
    return "agrees" if counts["agrees"] else "errors-as-upstream"


def build(suite: Suite, label: str, verdicts) -> dict:
    """Aggregate ``pipeline.judge_all`` output into the report dictionary."""
    rows: dict[str, dict] = {}
    sample_ok: dict[tuple, bool] = {}
    by_dtype = defaultdict(lambda: {"samples_all": 0, "samples_attempted": 0, "samples_agreeing": 0,
                                    "cases": Counter()})
    cases, tols, docs = [], {}, {}
    unjudged: dict[tuple, str] = {}
    refusals: dict[tuple, set] = defaultdict(set)  # sample -> names of what ours refused on it
    diverging: set = set()
    for doc, sample, case, v, ours, tol in verdicts:
        docs[doc["key"]] = doc
        if v.status in UNJUDGED:
            unjudged[(doc["key"], sample["id"])] = f"{v.status}: {v.notes[0] if v.notes else ''}"[:160]
            by_dtype[sample["dtype"]]["cases"][v.status] += 1
            cases.append({"key": doc["key"], "case": case["id"], "sample": sample["id"], "dtype": sample["dtype"],
                          "variant": case["variant"], "fn": case["fn"], "status": v.status, "notes": v.notes})
            continue
        rid = row_id(doc["key"], case["variant"], case["fn"])
        row = rows.setdefault(rid, {"id": rid, "key": doc["key"], "variant": case["variant"], "fn": case["fn"],
                                    "counts": Counter(), "dtypes": set(), "paths": set(), "first_problem": ""})
        row["counts"][v.status] += 1
        row["dtypes"].add(sample["dtype"])
        for entry in (ours or {}).get("paths") or []:
            row["paths"].add(": ".join(entry))
        if ours is not None and ours.get("ok") and ours.get("paths") is None:
            row["paths"].add("unknown")
        if v.status not in GOOD and not row["first_problem"]:
            row["first_problem"] = "; ".join(f"{k}: {m}" for k, m in v.failures.items()) or "; ".join(v.notes)
        skey = (doc["key"], sample["id"])
        sample_ok[skey] = sample_ok.get(skey, True) and v.status in GOOD
        if v.status == "refuses":
            refusals[skey].add(refusal_name(v.notes[0] if v.notes else ""))
        elif v.status == "diverges":
            diverging.add(skey)
        by_dtype[sample["dtype"]]["cases"][v.status] += 1
        if codec.is_float_name(sample["dtype"]):
            t = tol(sample["dtype"])
            tols.setdefault(doc["key"], {})[sample["dtype"]] = {"rtol": t.rtol, "atol": t.atol,
                                                                "source": t.source, "n": t.n, "normwise": t.normwise}
        cases.append({"key": doc["key"], "case": case["id"], "sample": sample["id"], "dtype": sample["dtype"],
                      "variant": case["variant"], "fn": case["fn"], "status": v.status,
                      **({"failures": v.failures} if v.failures else {}), **({"notes": v.notes} if v.notes else {})})
    dtype_of = {(d["key"], s["id"]): s["dtype"] for d in docs.values() for s in d["samples"]}
    regen = Counter()
    for skey, ok in sample_ok.items():
        by_dtype[dtype_of[skey]]["samples_attempted"] += 1
        by_dtype[dtype_of[skey]]["samples_agreeing"] += ok
    man = manifest(suite)
    skipped, lambda_only = {}, {}
    not_attempted: Counter = Counter()
    for key in man["keys"]:
        path = cases_dir(suite) / f"{key}.json"
        if not path.exists():
            not_attempted["generation failed"] += 1
            continue
        doc = docs.get(key) or json.loads(path.read_text())
        for dt, tot in doc["totals"].items():
            by_dtype[dt]["samples_all"] += tot["all"]
            if tot["picked"] < tot["all"]:
                why = ("no callable" if not doc["spellings"] else
                       "error inputs of an entry with no function spelling" if dt == "error_inputs" else
                       "beyond --max-samples")
                not_attempted[why] += tot["all"] - tot["picked"]
            stored = sum(s["dtype"] == dt for s in doc["samples"])
            if stored < tot["picked"]:
                not_attempted["dropped: " + "; ".join(doc["skipped"])] += tot["picked"] - stored
        for s in doc["samples"]:
            skey = (key, s["id"])
            if skey in sample_ok:
                regen[s.get("regen") or "stored"] += 1
            else:
                why = unjudged.get(skey, "no case")  # a digest is per sample: the status alone
                not_attempted["inputs-differ" if why.startswith("inputs-differ") else why[:120]] += 1
        if doc["skipped"]:
            skipped[key] = doc["skipped"]
        if not doc["spellings"]:
            lambda_only[key] = sum(t["all"] for t in doc["totals"].values())
    run = json.loads((results_dir(suite, label) / "_run.json").read_text())
    interp = results_dir(suite, label) / "_interpreter.json"
    totals = {"samples_all": sum(d["samples_all"] for d in by_dtype.values()),
              "samples_attempted": len(sample_ok), "samples_agreeing": sum(sample_ok.values()),
              "cases": dict(Counter(c["status"] for c in cases)), "rows": dict(Counter(
                  row_status(r["counts"]) for r in rows.values())),
              "not_attempted": dict(not_attempted.most_common()), "attempted_by_path": dict(regen.most_common())}
    return {
        "meta": {"suite": suite.params(), "label": label, "ours": run, "created": time.strftime("%Y-%m-%d %H:%M"),
                 "ours_interpreter": json.loads(interp.read_text()) if interp.exists() else None,
                 "cases": {k: man[k] for k in ("fingerprint", "created", "seconds", "upstream_python")},
                 "entries": {"generated": len(man["keys"]), "selected": man.get("entries_selected", len(man["keys"])),
                             "profiles": [n for n in upstream.other_cpu_profiles()
                                          if (results_dir(suite, f"upstream-{n}") / "_run.json").exists()]},
                 "generation_failures": man["failures"]},
        "totals": totals,
        "by_dtype": {k: dict(v, cases=dict(v["cases"])) for k, v in sorted(by_dtype.items())},
        "rows": [dict(r, status=row_status(r["counts"]), counts=dict(r["counts"]), dtypes=sorted(r["dtypes"]),
                      paths=sorted(r["paths"])) for r in rows.values()],
        "skipped": skipped, "lambda_only": lambda_only, "tolerances": tols, "cases": cases,
        "refusals": rank_refusals(refusals, diverging, sample_ok),
        "unjudged": {f"{k}|{sid}": why for (k, sid), why in sorted(unjudged.items())},
    }


def refusal_name(message: str) -> str:
    """What ours declined, from a refusal's message: ``aten::segment_reduce: no CPU kernel ...``."""
    return message.split(": ", 1)[0].strip() or "?"


def rank_refusals(refusals: dict, diverging: set, sample_ok: dict) -> list[dict]:
    """Each refused name with the samples it alone keeps from agreeing (implementing it unlocks
    them, unless they then diverge) and the samples it refuses at all."""
    alone, anywhere = Counter(), Counter()
    for skey, names in refusals.items():
        for n in names:
            anywhere[n] += 1
        if len(names) == 1 and skey not in diverging and not sample_ok[skey]:
            alone[next(iter(names))] += 1
    return [{"name": n, "unlocks": alone[n], "refused_samples": anywhere[n]}
            for n in sorted(anywhere, key=lambda n: (-alone[n], -anywhere[n], n))]


def rel(path) -> str:
    """Paths inside the repository as repository-relative (the markdown is committed)."""
    text, root = str(path), str(upstream.REPO) + "/"
    return text.replace(root, "")


def family_pages() -> list[str]:
    """Links to the families replayed on their own (docs/agreement-<family>.md), whose figures are
    newer than this page's wherever this sweep did not cover their entries."""
    pages = sorted((upstream.REPO / "docs").glob("agreement-*.md"))
    if not pages:
        return []
    return ["Families replayed with this harness on their own (their pages carry their own dates and "
            "commands): " + ", ".join(f"[{p.name}]({p.name})" for p in pages) + ".", ""]


def pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}%" if b else "n/a"


def markdown(rep: dict, command: str) -> str:
    t, m = rep["totals"], rep["meta"]
    interp = m["ours_interpreter"] or {}
    cap = f"at most {m['suite']['max_samples']}" if m["suite"]["max_samples"] else "all"
    out = [
        "# Agreement with upstream torch 2.13.0", "",
        f"Generated by `{command}` on {m['created']}; do not edit by hand. "
        "Each OpInfo sample is generated and run on upstream in its own interpreter, replayed on ours in "
        "another, and judged in a third (see `src/torchnative/testing/golden/`).", "",
        f"- ours: `{rel(m['ours']['python'])}` (label `{m['label']}`; torch._C: "
        f"`{rel(interp.get('torch_C', 'import torch failed: ' + interp.get('import_error', {}).get('message', '?')))}`)",
        f"- suite `{m['suite']['name']}`: ops {', '.join(m['suite']['ops']) or 'all OpInfo entries'}; "
        f"dtypes {', '.join(m['suite']['dtypes']) or 'all supported on CPU'} (at most {m['suite']['max_dtypes']} "
        f"per op); {cap} samples per op and dtype; seed {m['suite']['seed']}",
        f"- cases {m['cases']['fingerprint']} generated {m['cases']['created']} in {m['cases']['seconds']} s; "
        f"replay took {m['ours']['seconds']} s"
        + (f" (resumed: {m['ours']['kept']} entries kept from earlier replays (ours as it was then), "
           f"{m['ours']['replayed']} replayed by the last, finished {m['ours']['finished']})"
           if m['ours'].get('kept') else ""),
        f"- entries: {m['entries']['generated']} of the {m['entries']['selected']} selected were generated"
        + ("" if m['entries']['generated'] == m['entries']['selected'] else
           " (a partial sweep, `--shard`: every figure below covers only those entries)")
        + f"; upstream's reruns under other CPU profiles: {', '.join(m['entries']['profiles']) or 'none (stricter verdicts)'}", "",
        *family_pages(), "## Totals", "",
        "| OpInfo samples | count | share |", "|---|---:|---:|",
        f"| all (selected entries and dtypes) | {t['samples_all']} | |",
        f"| attempted (at least one case judged) | {t['samples_attempted']} | "
        f"{pct(t['samples_attempted'], t['samples_all'])} of all |",
        f"| agreeing (every spelling of the sample) | {t['samples_agreeing']} | "
        f"{pct(t['samples_agreeing'], t['samples_attempted'])} of attempted, {pct(t['samples_agreeing'], t['samples_all'])} of all |",
        "",
        "Cases (sample x spelling): " + ", ".join(f"{s} {t['cases'].get(s, 0)}" for s in STATUSES + UNJUDGED) + ".",
        "Rows (entry x spelling): " + ", ".join(f"{s} {t['rows'].get(s, 0)}" for s in STATUSES) + ".", "",
        "Attempted samples by how their inputs reached ours (`stored`: carried as arrays; otherwise "
        "regenerated from OpInfo on ours under upstream's seed and checked bit for bit first, for the "
        "reason given): " + ", ".join(f"{k} {n}" for k, n in t.get("attempted_by_path", {}).items()) + ".", "",
        "### Not attempted, by reason", "",
        "| reason | samples |", "|---|---:|"]
    out += [f"| {why.replace('|', '/')} | {n} |" for why, n in t.get("not_attempted", {}).items()]
    out += ["", "### Refusals ranked by the samples each would unlock", "",
            "`unlocks`: samples whose only problem is this refusal; `refused`: samples where it refuses at all.", "",
            "| refused | unlocks | refused |", "|---|---:|---:|"]
    out += [f"| `{r['name']}` | {r['unlocks']} | {r['refused_samples']} |" for r in rep.get("refusals", [])[:60]]
    out += ["",
        "## By dtype", "",
        "| dtype | samples | attempted | agreeing | " + " | ".join(STATUSES + UNJUDGED) + " |",
        "|---|---:|---:|---:|" + "---:|" * len(STATUSES + UNJUDGED)]
    for dt, d in rep["by_dtype"].items():
        out.append(f"| {dt} | {d['samples_all']} | {d['samples_attempted']} | {d['samples_agreeing']} | "
                   + " | ".join(str(d["cases"].get(s, 0)) for s in STATUSES + UNJUDGED) + " |")
    out += ["", "## By op", "",
            "`served by` is ours' own account of the path (kernel or decomposition) when its torch._C "
            "counts them (`torchnative.csrc.dispatch.door.served`), else `unknown`.", "",
            "| OpInfo entry | spelling | status | agree / cases | dtypes | served by | first problem |",
            "|---|---|---|---:|---|---|---|"]
    for r in sorted(rep["rows"], key=lambda r: (r["key"], r["variant"])):
        good = r["counts"].get("agrees", 0) + r["counts"].get("errors-as-upstream", 0)
        problem = r["first_problem"].replace("|", "\\|").replace("\n", " ")[:160]
        spelling = f"`{r['fn']}`" + (" (out=)" if r["variant"] == "out" else "")
        out.append(f"| {r['key']} | {spelling} | {r['status']} | {good}/{sum(r['counts'].values())} | "
                   f"{', '.join(r['dtypes'])} | {', '.join(r['paths']) or '-'} | {problem} |")
    out += ["", "## Not attempted", ""]
    if rep["lambda_only"]:
        out.append("Entries whose every callable is a lambda or wrapper (no qualified name to call on ours), "
                   "with their sample counts: " + ", ".join(f"{k} ({n})" for k, n in sorted(rep["lambda_only"].items())) + ".")
    for key, why in sorted(rep["skipped"].items()):
        out.append(f"- {key}: " + "; ".join(f"{w} ({n})" for w, n in why.items()))
    if rep["meta"]["generation_failures"]:
        out.append("- generation failed for: " + ", ".join(sorted(rep["meta"]["generation_failures"])))
    out += ["", "## How a case is judged", "",
            f"Floating tolerances are derived per op and dtype: upstream reruns each floating sample with "
            f"inputs widened to float64, and the tolerance is the {PERCENTILE}th percentile of upstream's own "
            f"error against that rerun, floored at {FLOOR_ULPS} ulp (float64 carries the float32 tolerance "
            "over in ulps). Comparators:", ""]
    out += [f"- `{name}`: {why}" for name, why in compare.WHY.items()]
    return "\n".join(out) + "\n"
