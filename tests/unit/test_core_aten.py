"""Issue 3 item 7: every core ATen overload (and its in-place/out= siblings) reaches a kernel, a
composite, a structured derivation or upstream's decomposition; none refuses. (That they compute
upstream's numbers is the golden harness's and the kernel tests' business.)"""

from __future__ import annotations

from torchnative.core_census import core_paths


def test_no_core_overload_refuses():
    core, siblings = core_paths()
    assert len(core) > 150  # the table really was read
    refusing = sorted(k for k, v in {**core, **siblings}.items() if v in ("refused", "missing"))
    assert refusing == []
    assert sum(v == "kernel" for v in core.values()) > 150
