"""The TorchScript front end's objects that upstream Python uses outside compilation.

``torch._sources`` builds SourceContexts (a SourceRangeFactory subclass) and asks
``ErrorReport.call_stack()`` while merely *checking* ``@torch.jit._overload`` bodies at import.
These are plain data; compiling TorchScript itself is not implemented and refuses by name.
"""

from __future__ import annotations

from ..core.refuse import TorchnativeNotImplementedError

_NO_TORCHSCRIPT = "TorchScript compilation is not implemented in torchnative"


class SourceRange:
    def __init__(self, factory: "SourceRangeFactory", start: int, end: int):
        self._factory, self._start, self._end = factory, start, end

    @property
    def start(self) -> int:
        return self._start

    @property
    def end(self) -> int:
        return self._end

    def highlight(self) -> str:
        return self._factory.source[self._start:self._end]

    def __repr__(self):
        return f"<SourceRange {self._start}:{self._end}>"


class SourceRangeFactory:
    def __init__(self, text: str, filename, file_lineno: int, leading_whitespace_chars: int):
        self._text = text
        self._filename = filename
        self._file_lineno = file_lineno
        self._leading = leading_whitespace_chars
        self._line_starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]

    @property
    def source(self) -> str:
        return self._text

    def make_raw_range(self, start: int, end: int) -> SourceRange:
        return SourceRange(self, start, end)

    def make_range(self, line: int, start_col: int, end_col: int) -> SourceRange:
        # ``line`` is 1-based as in Python's ast; columns are offset by the dedent
        base = self._line_starts[min(line - 1, len(self._line_starts) - 1)] + self._leading
        return SourceRange(self, base + start_col, base + end_col)


class ErrorReport(Exception):
    def __init__(self, range: SourceRange):
        super().__init__()
        self._range = range

    def what(self) -> str:
        return self._range.highlight()

    @staticmethod
    def call_stack() -> str:
        """The TorchScript compilation stack: always empty, as nothing compiles TorchScript here."""
        return ""


class CompilationUnit:
    """A container of TorchScript functions; torch.jit makes an empty one at import. Ours stays
    empty: defining into it would compile TorchScript, which refuses."""

    def __init__(self, lang: str = "", _frames_up: int = 0):
        if lang:
            self.define(lang)

    def find_function(self, name: str):
        return None

    def get_functions(self) -> list:
        return []

    def get_class(self, name: str):
        return None

    def get_interface(self, name: str):
        return None

    def define(self, script: str, rcb=None, _frames_up: int = 0):
        raise TorchnativeNotImplementedError("torch._C.CompilationUnit.define", _NO_TORCHSCRIPT)

    def create_function(self, name: str, graph, shouldMangle: bool = False):
        raise TorchnativeNotImplementedError("torch._C.CompilationUnit.create_function",
                                             _NO_TORCHSCRIPT)


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
    "torch._C.CompilationUnit": CompilationUnit,
    "torch._C._jit_tree_views.SourceRange": SourceRange,
    "torch._C._jit_tree_views.SourceRangeFactory": SourceRangeFactory,
    "torch._C.ErrorReport": ErrorReport,
}
