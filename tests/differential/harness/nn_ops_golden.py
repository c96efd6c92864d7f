"""The one way the test_nn_ops_* files replay their snippet cases against upstream: the kernel
golden harness's upstream run (once per module) as a fixture, and one parametrized test per case
(see kernel_golden for how values are judged)."""

from __future__ import annotations

import pytest

from kernel_golden import Golden
from torchnative.testing import upstream


def golden_suite(cases: list, label: str):
    """(harness, fixture ``golden``, test ``test_agrees_with_upstream``) for ``cases``; a test
    module binds them at module level under those names."""
    harness = Golden(cases)

    @pytest.fixture(scope="module")
    def golden(tmp_path_factory):
        if not upstream.available():
            upstream.missing("upstream environment (.venv-upstream) not installed")
        return harness.run_upstream(tmp_path_factory, label)

    @pytest.mark.parametrize("case_", cases, ids=[c[0] for c in cases])
    def test_agrees_with_upstream(golden, case_):
        doc, _ = golden
        up = doc[case_[0]]
        ours, ours_arrays = harness.ours(case_)
        harness.compare(golden, case_[1], up["low"], ours, ours_arrays, up["high"],
                        up.get("others", ()))

    return harness, golden, test_agrees_with_upstream
