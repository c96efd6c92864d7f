"""Shared test options: --slow runs the long sweeps."""

import pytest


def pytest_addoption(parser):
    parser.addoption("--slow", action="store_true", default=False, help="run slow sweeps too")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow sweep: run with --slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
