"""Programs that print reductions' raw bytes ({"threads", "capability", "cases": [[name, hex]]}),
run on both sides with a thread count, a CPU capability and a suite, compared without tolerance."""

from __future__ import annotations

from pathlib import Path

import sides
from torchnative.testing import upstream


def run_both(program: Path, threads: int, capability: str | None, suite: str):
    """(ours, upstream) documents of ``program`` (``capability``: ATEN_CPU_CAPABILITY, or None
    for the CPU's own)."""
    if not upstream.available():
        upstream.missing("the upstream interpreter")
    env = {"ATEN_CPU_CAPABILITY": capability} if capability else {}
    return sides.script_on_both(program, "--threads", str(threads), "--suite", suite, env=env)


def assert_same_bytes(ours, up, what: str) -> None:
    """Both sides ran the same cases under the same settings, and every value's bytes agree."""
    assert ours["threads"] == up["threads"]
    assert ours["capability"] == up["capability"]
    assert [c[0] for c in ours["cases"]] == [c[0] for c in up["cases"]]
    differ = [(name, o, u) for (name, o), (_, u) in zip(ours["cases"], up["cases"]) if o != u]
    assert not differ, f"{len(differ)} of {len(up['cases'])} {what} differ, first: {differ[:5]}"
