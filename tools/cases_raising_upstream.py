"""Which cases of the differential tests' programs raise on upstream: a review aid.

A test module whose ``PROGRAM`` (run on both interpreters, each case's outcome compared) holds a
case meant to compare values passes just as well when the case raises the same error on both
sides, and then tests nothing it claims (a mask that does not broadcast, a buffer of another
shape, an overload name that does not exist). This lists, per module, the cases whose outcome on
upstream is an error, for a reader to tell the intended error cases from the accidental ones.
The kernel golden suites check this themselves (``kernel_golden.golden_suite``'s errors family).

Usage: .venv/bin/python tools/cases_raising_upstream.py [test_module ...]
       (no module: every tests/differential/test_*.py with a module-level PROGRAM whose result
       is a mapping of case names)
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DIFF = REPO / "tests" / "differential"


def modules() -> list[str]:
    return [p.stem for p in sorted(DIFF.glob("test_*.py")) if "\nPROGRAM = " in p.read_text()]


def raising(module: str) -> dict | None:
    """{case: (error type, message)} of the cases raising on upstream, or None where the module's
    program does not run alone or returns something other than a mapping of cases."""
    import sides
    from torchnative.testing import upstream

    m = importlib.import_module(module)
    try:
        up = upstream.run_json(sides.program(m.PROGRAM), 600, {})
    except Exception:  # (a program that needs its module's set-up first)
        return None
    if not isinstance(up, dict):
        return None
    return {k: (v["error"], v["message"]) for k, v in up.items()
            if isinstance(v, dict) and "error" in v and "message" in v}


def main() -> None:
    sys.path[:0] = [str(DIFF / "harness"), str(DIFF)]
    for module in sys.argv[1:] or modules():
        found = raising(module)
        if found is None:
            print(f"== {module}: not scanned (its program needs more than itself)")
            continue
        print(f"== {module}: {len(found)} cases raise on upstream")
        for name, (error, message) in found.items():
            print(f"    {name} | {error}: {message[:110]}")


if __name__ == "__main__":
    main()
