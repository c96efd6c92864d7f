"""Run inside every upstream process the harness starts: proves that its torch is upstream's build.

The comparison interpreter is whatever ``TORCHNATIVE_UPSTREAM_PYTHON`` names; pointed at our own
environment, every comparison would hold ours against ours and pass. So the moment that process
finishes ``import torch`` this checks, in that process, that ``torch._C`` is a compiled extension
module and that no ``torchnative`` module is loaded, and otherwise ends the process at once with
``EXIT_CODE`` (a ``try: import torch`` in the program cannot swallow it).

This file is executed as source text (``upstream.py`` passes it on the command line), never
imported as part of the torchnative package: importing the package there would load torchnative.
It imports nothing but the standard library.
"""

import importlib.machinery
import importlib.util
import os
import sys

EXIT_CODE = 86
OURS = "torchnative"


def problems(torch) -> list:
    """Why ``torch`` is not upstream's compiled build (empty: it is)."""
    found = []
    c = getattr(torch, "_C", None)
    path = getattr(c, "__file__", None) or ""
    if not path.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
        found.append(f"torch._C is {path or repr(c)}, not a compiled extension module")
    elif not isinstance(getattr(c, "__loader__", None), importlib.machinery.ExtensionFileLoader):
        found.append(f"torch._C ({path}) was not loaded as an extension module")
    loaded = sorted(m for m in sys.modules if m == OURS or m.startswith(OURS + "."))
    if loaded:
        found.append(f"torchnative is loaded ({', '.join(loaded[:3])})")
    return found


def verify(torch) -> None:
    found = problems(torch)
    if found:
        sys.stderr.write(f"NOT UPSTREAM TORCH in {sys.executable} (torch at "
                         f"{getattr(torch, '__file__', '?')}): {'; '.join(found)}\n")
        sys.stderr.flush()
        os._exit(EXIT_CODE)


class _Guard:
    """A meta-path finder that wraps the loading of the top-level ``torch`` package."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)  # find the real spec without finding ourselves again
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            verify(module)

        spec.loader.exec_module = exec_module
        return spec


def install() -> None:
    if "torch" in sys.modules:  # imported before the guard could see it: check it now
        verify(sys.modules["torch"])
    elif not any(isinstance(f, _Guard) for f in sys.meta_path):
        sys.meta_path.insert(0, _Guard())


if __name__ == "upstream_guard":
    install()
