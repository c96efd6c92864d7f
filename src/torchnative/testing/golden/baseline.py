"""The ratchet over a suite's rows (``entry|variant|spelling``), in tests/golden_baseline.json.

The baseline pins three things, so that nothing regresses unseen:

- ``agrees``: rows that agreed (or raised as upstream does) when it was last updated; each must
  keep doing so.
- ``known``: every other row, with its status and its first problem then. Such a row may improve;
  it may not change status for a worse one or start failing with another comparator first. A
  row in neither list (a new row, or one renamed) must agree: a new divergence fails.
- ``totals``: the samples that agreed and were attempted; neither may fall.

``check`` lists the violations; ``update`` writes the current run's rows and totals, and refuses to
drop an agreeing row or lower a total unless told to.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from torchnative.testing import upstream

from .report import GOOD, STATUSES

BASELINE = upstream.REPO / "tests" / "golden_baseline.json"
PINNED_TOTALS = ("samples_agreeing", "samples_attempted")


def load(path: Path = BASELINE) -> dict:
    return json.loads(path.read_text())


# A row listed under "cpu_dependent" agrees on some CPUs and sits a float64 ulp or two outside the
# tolerance on others (an accumulation order that only upstream's vector width fixes). It may
# diverge there, but only in its values and only by this much; anything else is a regression.
CPU_DEPENDENT_MAX_DIFF = 1e-15


def _within_cpu_allowance(row: dict) -> bool:
    m = re.match(r"close: \d+/\d+ elements off \(max \|diff\| ([0-9.e+-]+)", row["first_problem"] or "")
    return row["status"] == "diverges" and m is not None and float(m.group(1)) <= CPU_DEPENDENT_MAX_DIFF


def first_comparator(row: dict) -> str:
    """The comparator that flagged a diverging row first (``close``, ``outcome``, ...), else ''."""
    if row["status"] != "diverges":
        return ""
    return (row["first_problem"] or "").split(":", 1)[0]


def known_entry(row: dict) -> str:
    return f"{row['status']}: {row['first_problem']}"


def _worse(now: dict, then: str) -> str | None:
    """Why a known row's current state is a regression from its recorded ``then``, or None."""
    status, _, problem = then.partition(": ")
    if now["status"] in GOOD:
        return None
    if STATUSES.index(now["status"]) > STATUSES.index(status):
        return f"was {status}, now {now['status']}: {now['first_problem']}"
    was = first_comparator({"status": status, "first_problem": problem})
    if now["status"] == status == "diverges" and first_comparator(now) != was:
        return f"first problem was {was}, now {now['first_problem']}"
    return None


def check(rep: dict, path: Path = BASELINE) -> list[str]:
    """Regressions against the baseline (empty: none)."""
    now = {r["id"]: r for r in rep["rows"]}
    doc = load(path)
    cpu_dependent = doc.get("cpu_dependent", {})
    known = doc.get("known", {})
    agrees = set(doc["agrees"])
    problems = []
    for rid in doc["agrees"]:
        row = now.get(rid)
        if row is None:
            problems.append(f"{rid}: not in this run (renamed or dropped from the suite?)")
        elif row["status"] not in GOOD and not (rid in cpu_dependent and _within_cpu_allowance(row)):
            problems.append(f"{rid}: {row['status']}: {row['first_problem']}")
    for rid, row in sorted(now.items()):
        if rid in agrees or row["status"] in GOOD:
            continue
        if rid not in known:
            problems.append(f"{rid}: {row['status']} and not a known row: {row['first_problem']}")
        elif why := _worse(row, known[rid]):
            problems.append(f"{rid}: {why}")
    for name, pinned in doc.get("totals", {}).items():
        if rep["totals"].get(name, 0) < pinned:
            problems.append(f"totals: {name} {rep['totals'].get(name, 0)}, the baseline pins {pinned}")
    return problems


def update(rep: dict, path: Path = BASELINE, allow_drop: bool = False) -> tuple[list[str], list[str]]:
    """Write the current run's agreeing rows, known rows and totals; returns (added, dropped)."""
    doc = load(path)
    old = set(doc["agrees"])
    cpu_dependent = doc.get("cpu_dependent", {})
    good = {r["id"] for r in rep["rows"] if r["status"] in GOOD
            or (r["id"] in cpu_dependent and _within_cpu_allowance(r))}
    dropped = sorted(old - good)
    if dropped and not allow_drop:
        raise SystemExit("refusing to drop agreeing rows from the baseline:\n  " + "\n  ".join(dropped))
    lower = {k: (rep["totals"][k], v) for k, v in doc.get("totals", {}).items() if rep["totals"][k] < v}
    if lower and not allow_drop:
        raise SystemExit(f"refusing to lower the baseline's totals (now, pinned): {lower}")
    doc["agrees"] = sorted(good if allow_drop else good | old)
    doc["known"] = {r["id"]: known_entry(r) for r in sorted(rep["rows"], key=lambda r: r["id"])
                    if r["id"] not in doc["agrees"]}
    doc["totals"] = {k: rep["totals"][k] for k in PINNED_TOTALS}
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return sorted(good - old), dropped
