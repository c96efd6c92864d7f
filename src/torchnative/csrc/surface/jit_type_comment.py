"""Types written as text: PEP 484 type comments (``# type: (Tensor, int) -> Tensor``) and string
annotations (``x: "Optional[int]"``), read into the tree views TorchScript's own parser gives.

``torch._C.parse_type_comment`` returns a Decl of unnamed parameters; ``merge_type_from_type_comment``
puts those types on a function's Decl, as ``mergeTypesFromTypeComment`` does. Python's own parser
reads the text (a type comment is its ``func_type`` grammar).
"""

from __future__ import annotations

import ast
import re

from .jit_frontend import SourceRangeFactory
from .jit_tree_views import (Decl, Ident, NoneLiteral, Param, Select, StringLiteral, Subscript,
                             TupleLiteral, Var)

_PREFIX = "# type:"


class _Reader:
    """Python ast of one line of type text to tree views, ranges in that text."""

    def __init__(self, text: str, offset: int):
        self.factory, self.offset = SourceRangeFactory(text, None, 1, 0), offset

    def range(self, node, start=None):
        return self.factory.make_raw_range(self.offset + (node.col_offset if start is None else start),
                                           self.offset + node.end_col_offset)

    def expr(self, node):
        r = self.range(node)
        if isinstance(node, ast.Name):
            return Var(Ident(r, node.id))
        if isinstance(node, ast.Attribute):
            attr = self.range(node, node.end_col_offset - len(node.attr))
            return Select(self.expr(node.value), Ident(attr, node.attr))
        if isinstance(node, ast.Subscript):
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            return Subscript(self.expr(node.value), [self.expr(e) for e in items])
        if isinstance(node, ast.Tuple):
            return TupleLiteral(r, [self.expr(e) for e in node.elts])
        if isinstance(node, ast.Constant) and node.value is None:
            return NoneLiteral(r)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return StringLiteral(r, node.value)
        raise RuntimeError(f"expected a type but found '{ast.unparse(node)}' here:\n" + r.highlight())


def parse_type_expr(text: str):
    """A string annotation's type expression."""
    body = text.strip()
    return _Reader(body, 0).expr(ast.parse(body, mode="eval").body)


def parse_type_comment(comment: str) -> Decl:
    stripped = comment.lstrip()
    start = len(comment) - len(stripped)
    factory = SourceRangeFactory(comment, None, 1, 0)
    if not stripped.startswith(_PREFIX):
        token = re.match(r"\w+|\S", stripped)
        found = token.group(0) if token else ""
        raise RuntimeError(f"expected type comment but found '{found}' here:\n"
                           + factory.make_raw_range(start, start + len(found)).highlight())
    after = start + len(_PREFIX)
    body = comment[after:]
    lead = len(body) - len(body.lstrip())
    text = body.strip()
    reader = _Reader(comment, after + lead)
    reader.factory = factory
    sig = ast.parse(text, mode="func_type")
    whole = factory.make_raw_range(start, len(comment.rstrip()))
    params = [Param(reader.expr(t), Ident(reader.range(t), ""), False) for t in sig.argtypes]
    return Decl(whole, params, reader.expr(sig.returns))


def _with_type(param: Param, type_expr) -> Param:
    # the type's range lies in the comment's text, so the parameter keeps its own range
    p = object.__new__(Param)
    p.type, p.name, p.kwarg_only, p._range = type_expr, param.name, param.kwarg_only, param.range()
    return p


def merge_type_from_type_comment(decl: Decl, type_decl: Decl, is_method: bool) -> Decl:
    expected = len(decl.params) - (1 if is_method else 0)
    if expected != len(type_decl.params):
        raise RuntimeError(
            f"\nNumber of type annotations ({len(type_decl.params)}) did not match the number of "
            f"{'method' if is_method else 'function'} parameters ({expected}):\n"
            + decl.range().highlight())
    own = decl.params[1:] if is_method else decl.params
    params = decl.params[:1] if is_method else []
    params += [_with_type(p, t.type) for p, t in zip(own, type_decl.params)]
    merged = object.__new__(Decl)
    merged._range, merged.params, merged.return_type = decl.range(), params, type_decl.return_type
    return merged


TORCH_C = {"torch._C.parse_type_comment": parse_type_comment,
           "torch._C.merge_type_from_type_comment": merge_type_from_type_comment}
