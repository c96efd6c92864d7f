"""Small torch._C utilities upstream Python calls at import: docstrings, API-usage logging."""

from __future__ import annotations


def add_docstr(obj, doc: str):
    """Attach ``doc`` to ``obj`` and return it (upstream refuses to overwrite an existing one)."""
    target = getattr(obj, "__func__", obj)
    if getattr(target, "__doc__", None) and isinstance(obj, type(add_docstr)) and \
            getattr(target, "__torchnative_docstr__", False):
        raise RuntimeError(f"function '{getattr(obj, '__name__', obj)}' already has a docstring")
    try:
        target.__doc__ = doc
        if isinstance(target, type(add_docstr)):
            target.__torchnative_docstr__ = True
    except (AttributeError, TypeError):
        raise RuntimeError(f"don't know how to add docstring to type '{type(obj).__name__}'") from None
    return obj


def log_api_usage_once(event: str) -> None:
    """Upstream forwards this to a logger that builds without one ignore; so do we."""


def log_api_usage_metadata(event: str, metadata: dict) -> None:
    """As log_api_usage_once."""


TORCH_C = {
    "torch._C._add_docstr": add_docstr,
    "torch._C._log_api_usage_once": log_api_usage_once,
    "torch._C._log_api_usage_metadata": log_api_usage_metadata,
}
