"""The torchnative command: help, clear errors for bad input, the info job."""

from __future__ import annotations

import subprocess
import sys

import pytest

from torchnative import cli


def _run(*args):
    return subprocess.run([sys.executable, "-m", "torchnative.cli", *args], capture_output=True,
                          text=True, timeout=300)


def test_help_lists_the_commands():
    out = _run("--help")
    assert out.returncode == 0 and all(c in out.stdout for c in ("chat", "embed", "info"))
    assert _run("chat", "--help").returncode == 0


@pytest.mark.parametrize("args, message", [
    (["chat", ""], "the prompt is empty"),
    (["chat", "--model-dir", "/nonexistent", "hi"], "model directory not found"),
    (["embed", " "], "non-empty sentence"),
    (["--model-dir", "/nonexistent", "hi"], "model directory not found"),  # default command
])
def test_bad_input_is_a_clear_usage_error(args, message):
    out = _run(*args)
    assert out.returncode == cli.EXIT_USAGE
    assert message in out.stderr and "Traceback" not in out.stderr


def test_info_computes():
    out = _run("info")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "torch._C from" in out.stdout and "a @ b = [[3.0, 3.0], [12.0, 12.0]]" in out.stdout
