"""Shared test options (--slow runs the long sweeps), and the check that upstream is upstream.

Before any test runs, the comparison interpreter is started once under the guard
(``testing.upstream.check_genuine``): a run whose "upstream" is not torch 2.13.0's compiled build
(``TORCHNATIVE_UPSTREAM_PYTHON`` pointed at our own environment, say) stops here, loudly, instead
of comparing ours with ours. A missing interpreter stops it too, unless
``TORCHNATIVE_TESTS_ALLOW_MISSING=1`` says to skip what needs it (CI never sets it).
"""

import pytest

from torchnative.testing import upstream


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False, help="run slow sweeps too")


def pytest_sessionstart(session):
    try:
        if not upstream.available():  # opted out: the tests that need upstream skip
            return
        upstream.check_genuine()
    except (OSError, RuntimeError) as exc:
        raise pytest.UsageError(f"the comparison interpreter is unusable: {exc}") from None


def pytest_collection_modifyitems(config, items):
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow sweep: run with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
