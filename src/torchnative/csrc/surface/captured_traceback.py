"""torch._C._profiler's captured tracebacks: ``gather_traceback`` and ``symbolize_tracebacks``.

Upstream's structured trace log (torch/_logging, installed with a handler in every process)
records the Python stack of many calls, including fx's Interpreter and make_fx, through
``torch.utils._traceback.CapturedTraceback``. Upstream gathers Python frames (and, on request,
TorchScript and C++ frames) cheaply and symbolizes them later. Here there is no TorchScript
interpreter and no C++ code, so the Python frames are the whole stack in every case.
"""

from __future__ import annotations

import sys


class CapturedTraceback:
    """Python frames, innermost first, as (filename, line, name)."""

    __slots__ = ("frames",)

    def __init__(self, frames):
        self.frames = frames


CapturedTraceback.__module__ = "torch._C._profiler"


def gather_traceback(python: bool = True, script: bool = True, cpp: bool = True) -> CapturedTraceback:
    frames = []
    if python:
        # the caller's frame first: upstream's C function has no Python frame of its own
        f = sys._getframe(1)
        while f is not None:
            frames.append((f.f_code.co_filename, f.f_lineno, f.f_code.co_name))
            f = f.f_back
    return CapturedTraceback(frames)


def symbolize_tracebacks(tracebacks) -> list:
    return [[{"name": name, "filename": fn, "line": line} for fn, line, name in tb.frames]
            for tb in tracebacks]


TORCH_C = {
    "torch._C._profiler.CapturedTraceback": CapturedTraceback,
    "torch._C._profiler.gather_traceback": gather_traceback,
    "torch._C._profiler.symbolize_tracebacks": symbolize_tracebacks,
}
