"""Errors raised inside a scripted function, reported as TorchScript's interpreter reports them.

Upstream runs a scripted function in its interpreter, which catches any error and raises anew:
"The following operation failed in the TorchScript interpreter", a traceback of TorchScript (per
scripted function, the innermost range of its compiled code that failed: an operator's callee, an
operator expression, a raise or assert statement), then the error's class and message. A ``raise``
or ``assert`` in the function becomes ``torch.jit.Error``; every other error a RuntimeError. Ours
runs the function as Python, so its traceback says where: that position (Python's own column
positions of the failing instruction) is rendered as upstream renders a SourceRange.
"""

from __future__ import annotations

import dis
import inspect
import os

from ..core.refuse import TorchnativeNotImplementedError
from .jit_frontend import SourceRange, _Source

_HEAD = ("The following operation failed in the TorchScript interpreter.\n"
         "Traceback of TorchScript (most recent call last):\n")
_RAISE = {dis.opmap["RAISE_VARARGS"]}
_CALLS = {dis.opmap[n] for n in ("CALL", "CALL_FUNCTION_EX") if n in dis.opmap}


class JITException(Exception):
    """``torch._C.JITException`` (``torch.jit.Error``): an exception raised by TorchScript code."""


def _library_dirs() -> tuple:
    import torch
    import torchnative
    return tuple(os.path.dirname(m.__file__) + os.sep for m in (torch, torchnative))


def _is_user(frame, libs) -> bool:
    return not frame.f_code.co_filename.startswith(libs)


def _frames(tb) -> list:
    out = []
    while tb is not None:
        out.append((tb.tb_frame, tb.tb_lasti))
        tb = tb.tb_next
    return out


def _line_start(text: str, pos: int) -> int:
    """The first non-blank character of the line holding ``pos``."""
    begin = text.rfind("\n", 0, pos) + 1
    return begin + len(text[begin:pos]) - len(text[begin:pos].lstrip())


def _opcode(code, lasti: int) -> int:
    """The instruction at ``lasti`` (which may point into its inline cache)."""
    return max((i for i in dis.get_instructions(code) if i.offset <= lasti),
               key=lambda i: i.offset).opcode


def _entry(frame, lasti: int, name: str) -> str:
    """One traceback entry: the failing instruction's source range in its function's source,
    narrowed to the callee for a call (as TorchScript's ranges for an operator call are)."""
    code = frame.f_code
    try:
        lines, first = inspect.getsourcelines(code)
    except (OSError, TypeError):
        return ""
    text = "".join(lines)  # as upstream's Source holds it: not dedented
    src = _Source(text, code.co_filename, first)
    positions = list(code.co_positions())[lasti // 2]
    l0, l1, c0, c1 = positions
    if None in positions:
        return ""
    start = src.offset_for_line(l0 - first) + c0
    end = src.offset_for_line(l1 - first) + c1
    op = _opcode(code, lasti)
    if op in _RAISE and text.startswith("assert", _line_start(text, start)):
        # an assert fails at its test; TorchScript's range is the statement
        start = _line_start(text, start)
        end = text.find("\n", start) % (len(text) + 1)
    if op in _CALLS and text[end - 1:end] == ")":
        depth = 0
        for k in range(end - 1, start - 1, -1):
            depth += {")": 1, "(": -1}.get(text[k], 0)
            if depth == 0:
                end = k
                break
    return SourceRange(src, start, end).highlight(funcname=name)


def interpreter_error(exc: Exception, name: str, own_code) -> BaseException:
    """The error upstream's interpreter raises for ``exc`` escaping the outermost scripted call,
    ``name`` (``own_code``: its function's code, where its frames start). An operator's error
    lists every function on the way (each by its name); a ``raise`` or ``assert`` only the range
    that raised, under the outermost name, as the interpreter reports its inlined code."""
    if isinstance(exc, TorchnativeNotImplementedError):
        return exc  # a refusal stays a refusal by name
    libs = _library_dirs()
    frames = _frames(exc.__traceback__)
    mine = [i for i, (f, _) in enumerate(frames) if f.f_code is own_code]
    frames = frames[mine[0]:] if mine else frames
    users = [(f, i) for f, i in frames if _is_user(f, libs)]
    raised_here = bool(users) and users[-1] == frames[-1] and \
        _opcode(frames[-1][0].f_code, frames[-1][1]) in _RAISE
    if raised_here:
        t = type(exc)
        where = "builtins" if t.__module__ == "builtins" else t.__module__
        cls = JITException
        tail = (f"RuntimeError: AssertionError: {exc}" if isinstance(exc, AssertionError)
                else f"{where}.{t.__qualname__}: {exc}")
        entries = [_entry(*users[-1], name)]
    else:
        cls = NotImplementedError if isinstance(exc, NotImplementedError) else RuntimeError
        tail = f"RuntimeError: {exc}"
        entries = [_entry(f, i, name if k == 0 else f.f_code.co_name)
                   for k, (f, i) in enumerate(users)]
    return cls(_HEAD + "".join(entries) + tail + "\n")
