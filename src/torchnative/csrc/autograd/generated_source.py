"""Compiling the Python source autograd writes out (recorders.py, formula_runners.py): named as a
file inside this package, so that anomaly mode's forward tracebacks leave its frames out as they
leave out the rest of torch._C, and kept in linecache, so that a traceback through it shows the
line that failed."""

from __future__ import annotations

import linecache
import os

_DIR = os.path.dirname(os.path.abspath(__file__))


def compiled(source: str, name: str, namespace: dict) -> dict:
    """Runs ``source`` (function definitions) in ``namespace`` and returns it."""
    filename = os.path.join(_DIR, f"<{name}>")
    lines = source.splitlines(keepends=True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    exec(compile(source, filename, "exec"), namespace)
    return namespace
