"""The TorchScript front end's source objects: SourceRange, SourceRangeFactory, ErrorReport.

``torch.jit.frontend`` makes ranges while it turns a Python function into tree views, and its
errors (``UnsupportedNodeError``, ``NotSupportedError``) print ``ErrorReport(range).what()``: the
highlighted source with the file and line, in upstream's layout (``SourceRange::print_with_context``).
"""

from __future__ import annotations

from ..core.refuse import TorchnativeNotImplementedError
from ..ops.schema import _highlight

_CONTEXT = 3  # lines of context printed around a highlighted range


class _Source:
    """``torch::jit::Source``: text, an optional file name and the file line the text starts at."""

    def __init__(self, text: str, filename, starting_line_no: int):
        self.text, self.filename, self.starting_line_no = text, filename, starting_line_no
        self.line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    def offset_for_line(self, line: int) -> int:
        return self.line_starts[min(line, len(self.line_starts) - 1)]

    def lineno_for_offset(self, offset: int) -> int:
        lo = 0
        for i, s in enumerate(self.line_starts):
            if s <= offset:
                lo = i
        return lo


class SourceRange:
    def __init__(self, source: _Source, start: int, end: int):
        self._source, self._start, self._end = source, start, end

    @property
    def start(self) -> int:
        return self._start

    @property
    def end(self) -> int:
        return self._end

    def file_line_col(self):
        src = self._source
        if src.filename is None:
            return None
        line = src.lineno_for_offset(self._start)
        return src.filename, src.starting_line_no + line, self._start - src.offset_for_line(line)

    def highlight(self, funcname: str = "") -> str:
        """``SourceRange::highlight``: the file and line (and the function a traceback entry
        names), then the range in its context."""
        text = self._source.text
        body = _highlight(text, self._start, self._end, _CONTEXT)
        flc = self.file_line_col()
        if flc is None or self._end - self._start == len(text) or self._start > len(text):
            return body
        where = f'  File "{flc[0]}", line {flc[1]}' + (f", in {funcname}" if funcname else "")
        return where + "\n" + body

    def __repr__(self):
        return self.highlight()

    def __str__(self):
        return "SourceRange at:\n" + repr(self)


class SourceRangeFactory:
    def __init__(self, text: str, filename, file_lineno: int, leading_whitespace_chars: int):
        self._src = _Source(str(text), None if filename is None else str(filename), int(file_lineno))
        self._leading = int(leading_whitespace_chars)

    @property
    def source(self) -> str:
        return self._src.text

    def make_raw_range(self, start: int, end: int) -> SourceRange:
        return SourceRange(self._src, start, end)

    def make_range(self, line: int, start_col: int, end_col: int) -> SourceRange:
        # lines count from 1 as in Python's ast; columns are shifted by the dedent
        base = self._src.offset_for_line(line - 1)
        return SourceRange(self._src, base + start_col + self._leading, base + end_col + self._leading)


class ErrorReport(Exception):
    def __init__(self, range: SourceRange):
        super().__init__()
        self._range = range

    def what(self) -> str:
        return "\n:\n" + self._range.highlight()

    @staticmethod
    def call_stack() -> str:
        """The stack of functions being compiled: empty, as compilation here never recurses (a
        scripted function's callees run as Python)."""
        return ""


def tracer_warn_use_python() -> None:
    """Route the JIT tracer's warnings through Python: there is no tracer here to route."""


def get_tracing_state():
    """The JIT tracer's state: None, as nothing traces TorchScript here."""
    return None


def is_tracing() -> bool:
    return False


TORCH_C = {
    "torch._C._tracer_warn_use_python": tracer_warn_use_python,
    "torch._C._get_tracing_state": get_tracing_state,
    "torch._C._is_tracing": is_tracing,
    "torch._C._jit_tree_views.SourceRange": SourceRange,
    "torch._C._jit_tree_views.SourceRangeFactory": SourceRangeFactory,
    "torch._C.ErrorReport": ErrorReport,
}
