"""The ratchet: rows of the fast subset that agree must keep agreeing.

tests/golden_baseline.json lists rows (``entry|variant|spelling``) that agreed (or raised as upstream
does) when it was last updated. ``check`` fails on any listed row that is now worse or missing;
``update`` adds newly agreeing rows and refuses to drop any unless told to.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from torchnative.testing import upstream

from .report import GOOD

BASELINE = upstream.REPO / "tests" / "golden_baseline.json"


def load(path: Path = BASELINE) -> dict:
    return json.loads(path.read_text())


# A row listed under "cpu_dependent" agrees on some CPUs and sits a float64 ulp or two outside the
# tolerance on others (an accumulation order that only upstream's vector width fixes). It may
# diverge there, but only in its values and only by this much; anything else is a regression.
CPU_DEPENDENT_MAX_DIFF = 1e-15


def _within_cpu_allowance(row: dict) -> bool:
    m = re.match(r"close: \d+/\d+ elements off \(max \|diff\| ([0-9.e+-]+)", row["first_problem"] or "")
    return row["status"] == "diverges" and m is not None and float(m.group(1)) <= CPU_DEPENDENT_MAX_DIFF


def check(rep: dict, path: Path = BASELINE) -> list[str]:
    """Regressions: baseline rows that no longer agree (or no longer exist in the report)."""
    now = {r["id"]: r for r in rep["rows"]}
    doc = load(path)
    cpu_dependent = doc.get("cpu_dependent", {})
    problems = []
    for rid in doc["agrees"]:
        row = now.get(rid)
        if row is None:
            problems.append(f"{rid}: not in this run (renamed or dropped from the suite?)")
        elif row["status"] not in GOOD and not (rid in cpu_dependent and _within_cpu_allowance(row)):
            problems.append(f"{rid}: {row['status']}: {row['first_problem']}")
    return problems


def update(rep: dict, path: Path = BASELINE, allow_drop: bool = False) -> tuple[list[str], list[str]]:
    """Write the currently agreeing rows; returns (added, dropped)."""
    doc = load(path)
    old = set(doc["agrees"])
    good = {r["id"] for r in rep["rows"] if r["status"] in GOOD}
    dropped = sorted(old - good)
    if dropped and not allow_drop:
        raise SystemExit("refusing to drop agreeing rows from the baseline:\n  " + "\n  ".join(dropped))
    doc["agrees"] = sorted(good if allow_drop else good | old)
    path.write_text(json.dumps(doc, indent=1) + "\n")
    return sorted(good - old), dropped
