"""Function schemas as upstream's ``torch._C`` exposes them: ``parse_schema``, ``FunctionSchema``,
``Argument``, ``_AliasInfo``.

The parser is a port of upstream's TorchScript lexer + ``SchemaParser``/``SchemaTypeParser``
(torch/csrc/jit/frontend), so that the accepted language, the parsed values (fake vs real types,
default values, alias sets) and the error messages (``RuntimeError`` with the source highlighted)
agree with torch 2.13.0; printing follows ``c10::FunctionSchema``'s ``operator<<``. Parsed schemas
are immutable and cached by string: every operator's schema is parsed at import.
"""

from __future__ import annotations

import math
import re

from . import jit_types as jt
from ..core.device import device as _device
from .jit_types import STR_TO_DTYPE, Type
from ..platform.pybind_errors import incompatible_arguments

__all__ = ["parse_schema", "parse_schema_or_name", "FunctionSchema", "Argument", "_AliasInfo",
           "_register_opaque_type", "_is_opaque_type_registered", "_unregister_opaque_type"]

# =============================================================================================
# Errors (upstream's three flavours: Lexer::expected, ErrorReport, TORCH_CHECK/INTERNAL_ASSERT)
# =============================================================================================


def _highlight(src: str, start: int, end: int, context: int = 3) -> str:
    """``SourceRange::print_with_context(out, CONTEXT, /*highlight=*/true, "")``."""
    n = len(src)
    if end - start == n:
        return src
    range_end = min(n, end)
    if start > n:
        return ""
    begin_line, end_line = start, range_end
    while begin_line > 0 and src[begin_line - 1] != "\n":
        begin_line -= 1
    while end_line < n and src[end_line] != "\n":
        end_line += 1
    begin_context, i = begin_line, 0
    while begin_context > 0:
        if src[begin_context - 1] == "\n":
            i += 1
        if i >= context:
            break
        begin_context -= 1
    end_context, i = end_line, 0
    while end_context < n:
        if src[end_context] == "\n":
            i += 1
        if i >= context:
            break
        end_context += 1
    out = [src[begin_context:start]]
    line_start = line_end = start
    while line_start < range_end:
        while line_end < n and src[line_end] != "\n":
            line_end += 1
        actual = src[line_start:line_end + 1]
        out.append(actual if actual.endswith("\n") else actual + "\n")
        hb = he = line_start
        while hb > 0 and src[hb - 1] != "\n":
            hb -= 1
        while he < range_end and src[he] != "\n":
            he += 1
        empty = 0
        for k in range(hb, he):
            if src[k] == " " or k < start:
                empty += 1
            else:
                break
        hs = he - hb - empty
        if hs > 0:
            more = any((src[k] if k < n else "\0") not in "\n " for k in range(line_end, range_end + 1))
            out.append(" " * empty + "~" * hs
                       + ("\n" if more and line_end != range_end else " <--- HERE\n"))
        line_end += 1
        line_start = line_end
    if line_end <= n:
        tail = src[line_end:end_context]
        out.append(tail if not tail or tail.endswith("\n") else tail + "\n")
    return "".join(out)


def _internal_assert(cond: str, where: str, msg: str) -> RuntimeError:
    """``where`` is 'path":line' as upstream's message quotes it."""
    return RuntimeError(f'{cond} INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/{where}, '
                        f"please report a bug to PyTorch. {msg}")


# =============================================================================================
# Lexer (torch/csrc/jit/frontend/lexer.h): tokens are (kind, start, end); kinds are the names
# kindToString gives ("ident", "number", "arrow", "eof", ")" ...), used verbatim in messages.
# =============================================================================================

_KEYWORDS = {w: w for w in (
    "def if else elif while return is True False None and or not global for in raise assert "
    "break continue del pass class import with as Ellipsis NoneType").split()}
_OPS = {"<=>": "equivalent", "!=": "ne", "==": "eq", "<=": "le", ">=": "ge", "//": "floordiv",
        "**": "pow operator", "->": "arrow", "...": "dots"}
for _op in ("<< >> += -= *= /= %= |= &= ^= <<= >>= **=".split()):
    _OPS[_op] = _op
_SINGLE = "+-*/%@()[]:,={}><.?!&^|~"
_HEX = "[0-9a-fA-F]"
# strtod's accepted prefix (decimal or hex float), plus the complex 'j' suffix
_NUMBER = (rf"(?:0[xX](?:{_HEX}+\.?{_HEX}*|\.{_HEX}+)(?:[pP][+-]?\d+)?"
           r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)j?")
_OPS_RE = "|".join(re.escape(o) for o in sorted(_OPS, key=len, reverse=True))
# fast path: blanks, then a number / identifier / operator token
_TOKEN = re.compile(rf"[ \t\r\v\f]*(?:(?P<num>{_NUMBER})|(?P<id>[A-Za-z_][A-Za-z0-9_]*)"
                    rf"|(?P<op>{_OPS_RE}|[{re.escape(_SINGLE)}]))", re.ASCII)
_BLANKS = re.compile(r"[ \t\r\v\f]*")


def _is_string(src: str, start: int):
    """``SharedParserData::isString`` on the rest of the line: end offset, or None."""
    q = src[start]
    ql = 3 if src.startswith(q * 3, start) else 1
    end, n = start + ql, len(src)
    while end < n and not src.startswith(q * ql, end):
        if src[end] == "\n" and ql != 3:
            return None
        if src[end] == "\\":
            end += 1
        end += 1
    return end + ql if end < n else None


def _match(src: str, pos: int, continuation: bool, ws_token: bool):
    """``SharedParserData::match``: (kind, start, end), or (None, bad_start, pos) on failure."""
    n = len(src)
    while True:
        start = pos
        if not ws_token:
            m = _TOKEN.match(src, pos)
            if m is not None:
                kind = m.lastgroup
                s, e = m.span(kind)
                if kind == "id":
                    word = src[s:e]
                    kw = _KEYWORDS.get(word)
                    if kw is None:
                        return "ident", s, e
                    if word == "is" and src.startswith(" not", e):
                        return "is not", s, e + 4
                    if word == "not" and src.startswith(" in", e):
                        return "not in", s, e + 3
                    return kw, s, e
                if kind == "num":
                    return "number", s, e
                tok = src[s:e]
                return _OPS.get(tok, tok), s, e
        pos = _BLANKS.match(src, pos).end()
        c = src[pos] if pos < n else ""
        if c == "#" and not src.startswith("# type:", pos):
            nl = src.find("\n", pos)
            pos = n if nl < 0 else nl
            continue
        if c == "\\" and src.startswith("\\\n", pos) and not ws_token:
            pos += 2
            continue
        if c == "\n":
            pos += 1
            ws_token = not continuation
            continue
        if ws_token:
            return ("whitespace_eof" if pos >= n else "whitespace"), start, pos
        if pos >= n:
            return "eof", pos, pos
        if c in "\"'":
            e = _is_string(src, pos)
            if e is not None:
                return "string_literal", pos, e
        if c == "#":
            return "type comment", pos, pos + 7
        return None, pos, start


def _lex(src: str):
    """Tokenize all of ``src`` (upstream lexes lazily; a failure becomes an 'error' token that
    raises when the parser reaches it, as upstream's lazy lexer would)."""
    kinds, starts, ends = [], [], []
    _, s, e = _match(src, 0, False, True)
    indent = [e - s]
    pos, nesting = e, 0
    while True:
        kind, s, e = _match(src, pos, nesting > 0, False)
        if kind is None:  # s: offending char; e: where this token's scan began
            kinds.append("error")
            starts.append(s)
            ends.append(e)
            return kinds, starts, ends, indent
        pos = e
        if kind in "([{" and len(kind) == 1:
            nesting += 1
        elif kind in ")]}" and len(kind) == 1:
            nesting -= 1
        elif kind.startswith("whitespace"):
            depth = indent[0] if kind == "whitespace_eof" else e - s
            if depth > indent[-1]:
                indent.append(depth)
                kind = "indent"
            elif depth == indent[-1]:
                kind = "newline"
            else:
                kinds.append("newline"), starts.append(s), ends.append(e)
                while indent[-1] != depth:
                    indent.pop()
                    kinds.append("dedent"), starts.append(s), ends.append(e)
                    if not indent:
                        kinds.append("bad_indent"), starts.append(s), ends.append(e)
                        return kinds, starts, ends, indent
                continue
        kinds.append(kind)
        starts.append(s)
        ends.append(e)
        if kind == "eof":
            return kinds, starts, ends, indent


# =============================================================================================
# Values: default values are kept as Python values (upstream IValues), printed like IValues
# =============================================================================================

_NO_DEFAULT = object()


def _fmt_double(d: float) -> str:
    if d == d and d not in (math.inf, -math.inf) and d.is_integer() and -2**63 <= d < 2**63:
        return f"{int(d)}."
    return "%.17g" % d


def _fmt_ivalue(v) -> str:
    """``operator<<(ostream&, const IValue&)`` for the value kinds a schema default can have."""
    t = type(v)
    if v is None:
        return "None"
    if t is bool:
        return "True" if v else "False"
    if t is int:
        return str(v)
    if t is float:
        return _fmt_double(v)
    if t is complex:
        return (_fmt_double(v.real) + ("+" if v.imag >= 0 else "-") + _fmt_double(abs(v.imag))
                + "j")
    if t is str:
        return v
    if t is list:
        return "[" + ", ".join(map(_fmt_ivalue, v)) + "]"
    if t is tuple:
        return "(" + ", ".join(map(_fmt_ivalue, v)) + (",)" if len(v) == 1 else ")")
    return str(v)  # Device defaults print as "cpu", "cuda:1"; Python-given values via str


_QUOTE_ESC = {"\\": "\\\\", "'": "\\'", '"': '\\"', "\a": "\\a", "\b": "\\b", "\f": "\\f",
              "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def _quoted(s: str) -> str:
    """``c10::printQuotedString`` (byte-wise; non-printables as C's signed-char octal)."""
    if s.isascii() and s.isprintable() and not any(c in s for c in "\\'\""):
        return '"' + s + '"'
    out = ['"']
    for b in s.encode("utf-8", "surrogateescape"):
        c = chr(b)
        if c in _QUOTE_ESC:
            out.append(_QUOTE_ESC[c])
        elif 0x20 <= b < 0x7F:
            out.append(c)
        else:
            sc = b - 256 if b >= 128 else b  # char is signed: C++ % and / truncate toward zero
            d2 = int(math.fmod(sc, 8))
            sc = int(sc / 8)
            d1 = int(math.fmod(sc, 8))
            sc = int(sc / 8)
            out.append("\\" + "".join(chr(48 + d) for d in (sc, d1, d2)))
    out.append('"')
    return "".join(out)


def _ivalue_key(v):
    """Equality as ``IValue ==``: the kind matters (1 != 1.0, True != 1)."""
    t = type(v)
    if t is list or t is tuple:
        return (t.__name__, tuple(map(_ivalue_key, v)))
    return (t.__name__, v)


def _ivalue_hash(v, list_type: str):
    if type(v) is list:
        raise RuntimeError(f"unhashable type: '{list_type}'")
    if type(v) is complex:
        raise RuntimeError("unhashable type: 'complex'")
    return hash(_ivalue_key(v))


_STOD = re.compile(rf"\s*[+-]?(?:0[xX](?:{_HEX}+\.?{_HEX}*|\.{_HEX}+)(?:[pP][+-]?\d+)?"
                   r"|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)", re.I)
_STOLL = re.compile(r"\s*[+-]?\d+")


def _stod(s: str) -> float:
    """``std::stod``: strtod on the longest valid prefix; pybind maps its exceptions."""
    m = _STOD.match(s)
    if m is None:
        raise ValueError("stod")
    txt = m.group().strip()
    try:
        v = float.fromhex(txt) if "x" in txt.lower() else float(txt)
    except OverflowError:
        raise IndexError("stod") from None
    mantissa = re.split(r"[eEpP]", txt.lower().split("x")[-1])[0]
    if (math.isinf(v) and "inf" not in txt.lower()) or (v == 0 and re.search(r"[1-9a-f]", mantissa)):
        raise IndexError("stod")  # ERANGE -> std::out_of_range
    return v


def _stoll(s: str) -> int:
    m = _STOLL.match(s)
    if m is None:
        raise ValueError("stoll")
    v = int(m.group())
    if not -2**63 <= v < 2**63:
        raise IndexError("stoll")
    return v


# =============================================================================================
# AliasInfo, Argument, FunctionSchema
# =============================================================================================

class _AliasInfo:
    """``c10::AliasInfo``. Sets hold qualified symbols (``alias::a``) in insertion order; upstream
    keeps them in unordered_sets whose iteration (hence printing) order is the reverse."""

    __module__ = "torch._C"
    __slots__ = ("_is_write", "_before", "_after", "_contained")

    def __init__(self, is_write, before_set, after_set, /):
        self._is_write = bool(is_write)
        self._before = [_qualify(s) for s in sorted(before_set)]
        self._after = [_qualify(s) for s in sorted(after_set)]
        self._contained = []

    @property
    def is_write(self):
        return self._is_write

    @property
    def before_set(self):
        return {s.partition("::")[2] for s in self._before}

    @property
    def after_set(self):
        return {s.partition("::")[2] for s in self._after}

    def _print(self) -> str:
        out = "(" + "|".join(s.partition("::")[2] for s in reversed(self._before))
        if self._is_write:
            out += "!"
        if set(self._before) != set(self._after):
            out += " -> " + "|".join(s.partition("::")[2] for s in reversed(self._after))
        return out + ")"


def _qualify(s: str) -> str:
    if "::" not in s:
        raise RuntimeError(f"all symbols must have a namespace, <namespace>::<string>, but found: {s}")
    return s


def _new_alias(is_write=False, before=None, after=None):
    a = object.__new__(_AliasInfo)
    a._is_write, a._before, a._after, a._contained = is_write, before or [], after or [], []
    return a


def _alias_eq(a, b) -> bool:
    if a is b:
        return True
    if a is None or b is None:
        return False
    return (a._is_write == b._is_write and set(a._before) == set(b._before)
            and set(a._after) == set(b._after) and len(a._contained) == len(b._contained)
            and all(map(_alias_eq, a._contained, b._contained)))


def _alias_hash(a) -> int:
    return hash((a._is_write, frozenset(a._before), frozenset(a._after),
                 tuple(map(_alias_hash, a._contained))))


class Argument:
    """``c10::Argument``: ``type`` is the fake type (int for ScalarType/Layout/MemoryFormat/SymInt),
    ``real_type`` the declared one. No __eq__ from Python (identity), as upstream."""

    __module__ = "torch"
    __slots__ = ("_name", "_type", "_real_type", "_N", "_default", "_kwarg_only", "_alias_info",
                 "_is_out")

    def __init__(self, name, type, N, default_value, kwarg_only, alias_info, /):
        if not isinstance(type, Type):
            raise TypeError(f"Argument(): type must be a torch._C.Type, not {type!r}")
        _init_argument(self, str(name), type, type, None if N is None else int(N),
                       _NO_DEFAULT if default_value is None else default_value,
                       bool(kwarg_only), alias_info)

    def __reduce_ex__(self, protocol):
        raise TypeError("cannot pickle 'torch._C.Argument' object")

    name = property(lambda self: self._name)
    type = property(lambda self: self._type)
    real_type = property(lambda self: self._real_type)
    N = property(lambda self: self._N)
    kwarg_only = property(lambda self: self._kwarg_only)
    alias_info = property(lambda self: self._alias_info)
    is_out = property(lambda self: self._is_out)

    @property
    def is_write(self):
        return self._alias_info is not None and self._alias_info._is_write

    @property
    def default_value(self):
        v = self._default
        if v is _NO_DEFAULT:
            return None
        if type(v) is str and not v.isascii():  # bytes that are not UTF-8 fail as pybind's do
            v.encode("utf-8", "surrogateescape").decode()
        return list(v) if type(v) is list else v

    def has_default_value(self):
        return self._default is not _NO_DEFAULT

    def _print(self) -> str:
        """``operator<<(ostream&, const Argument&)``: prints the real type, Type(alias)? name=default."""
        t = self._real_type
        is_opt = isinstance(t, jt.OptionalType)
        unopt = t._parts[0] if is_opt else t
        ai = self._alias_info
        if isinstance(unopt, jt.ListType):
            out = unopt._parts[0]._str
            if ai is not None and ai._contained:
                out += ai._contained[0]._print()
            out += "[" + ("" if self._N is None else str(self._N)) + "]"
        else:
            out = unopt._str
        if ai is not None and ai._before:
            out += ai._print()
        if is_opt:
            out += "?"
        if self._name:
            out += " " + self._name
        d = self._default
        if d is not _NO_DEFAULT:
            if (t._kind == "StringType" or unopt._kind == "StringType") and type(d) is str:
                out += "=" + _quoted(d)
            elif (t._kind == "ListType" and t._parts[0]._kind == "IntType" and type(d) is list
                  and len(d) > 1 and all(x == d[0] for x in d)):
                out += "=" + _fmt_ivalue(d[0])  # as native_functions.yaml writes int[2] stride=1
            else:
                out += "=" + _fmt_ivalue(d)
        return out

    def _eq(self, o) -> bool:
        return (self._name == o._name and jt.type_equal(self._type, o._type) and self._N == o._N
                and (self._default is o._default or (
                    self._default is not _NO_DEFAULT and o._default is not _NO_DEFAULT
                    and _ivalue_key(self._default) == _ivalue_key(o._default)))
                and self._kwarg_only == o._kwarg_only and _alias_eq(self._alias_info, o._alias_info))

    def _hash(self) -> int:
        h = hash((self._name, jt.type_hash(self._type), self._kwarg_only, self._N))
        if self._default is not _NO_DEFAULT:
            t = self._type
            if isinstance(t, jt.OptionalType):
                t = t._parts[0]
            h = hash((h, _ivalue_hash(self._default, t._ann if isinstance(t, jt.ListType)
                                      else _list_type_name(self._default))))
        if self._alias_info is not None:
            h = hash((h, _alias_hash(self._alias_info)))
        return h


def _list_type_name(v) -> str:
    if type(v) is not list:
        return ""
    kinds = {type(x).__name__ for x in v}
    return f"List[{kinds.pop()}]" if len(kinds) == 1 else "List[Any]"


def _init_argument(a, name, fake, real, N, default, kwarg_only, alias_info):
    a._name, a._type, a._real_type, a._N = name, fake, real, N
    a._default, a._kwarg_only, a._alias_info = default, kwarg_only, alias_info
    # an out argument is a kwarg-only argument that is written to (soft invariant upstream)
    a._is_out = kwarg_only and alias_info is not None and alias_info._is_write
    return a


class FunctionSchema:
    """``c10::FunctionSchema``. Upstream exposes neither ``is_vararg`` nor ``is_varret`` to Python
    (subclasses such as HopSchema set those attributes themselves); ours are ``_is_vararg`` etc."""

    __module__ = "torch"
    __slots__ = ("_name", "_overload_name", "_arguments", "_returns", "_is_vararg", "_is_varret",
                 "_str", "__weakref__")

    def __init__(self, name, overload_name, arguments, returns, is_vararg, is_varret, /):
        for a in (*arguments, *returns):
            if not isinstance(a, Argument):
                raise TypeError(f"FunctionSchema(): arguments must be torch._C.Argument, not {a!r}")
        _init_schema(self, str(name), str(overload_name), tuple(arguments), tuple(returns),
                     bool(is_vararg), bool(is_varret))

    name = property(lambda self: self._name)
    overload_name = property(lambda self: self._overload_name)
    arguments = property(lambda self: list(self._arguments))
    returns = property(lambda self: list(self._returns))

    @property
    def is_mutable(self):
        return any(a._alias_info is not None and a._alias_info._is_write for a in self._arguments)

    def _is_view_op(self):
        return any(a._alias_info is not None and not a._alias_info._is_write
                   for a in self._arguments)

    def __str__(self):
        s = self._str
        if s is None:
            s = _print_schema(self)
            if not s.isascii():  # a raw non-UTF-8 default (int x="\351") fails as upstream's does
                s = s.encode("utf-8", "surrogateescape").decode()
            self._str = s
        return s

    __repr__ = __str__

    def __eq__(self, other):
        if not isinstance(other, FunctionSchema):
            raise incompatible_arguments(
                "__eq__", ["(self: torch._C.FunctionSchema, arg0: torch._C.FunctionSchema) -> bool"],
                (self, other))
        return (self._name == other._name and self._overload_name == other._overload_name
                and len(self._arguments) == len(other._arguments)
                and len(self._returns) == len(other._returns)
                and all(a._eq(b) for a, b in zip(self._arguments, other._arguments))
                and all(a._eq(b) for a, b in zip(self._returns, other._returns))
                and self._is_vararg == other._is_vararg and self._is_varret == other._is_varret)

    def __hash__(self):
        return hash((self._name, self._overload_name, tuple(a._hash() for a in self._arguments),
                     tuple(a._hash() for a in self._returns), self._is_vararg, self._is_varret))

    def __reduce__(self):  # upstream pickles a schema as its string
        return parse_schema, (str(self),)

    def is_backward_compatible_with(self, old):
        return _backward_compatible(self, old)

    def check_forward_compatible_with(self, old):
        return _forward_compatible(self, old)


def _init_schema(s, name, overload, arguments, returns, is_vararg, is_varret):
    s._name, s._overload_name = name, overload
    s._arguments, s._returns = arguments, returns
    s._is_vararg, s._is_varret, s._str = is_vararg, is_varret, None
    # FunctionSchema::checkSchema: no positional non-default argument after a default one
    # (lists exempt: broadcasting lists were historically serialized without defaults)
    seen_default = False
    for a in arguments:
        if a._default is not _NO_DEFAULT:
            seen_default = True
        elif a._type._kind != "ListType" and seen_default and not a._kwarg_only:
            raise _internal_assert(
                "!seen_default_arg || arg.kwarg_only()", 'aten/src/ATen/core/function_schema.h":342',
                "Non-default positional argument follows default argument. Parameter "
                f"{a._name} in {_print_schema(s)}")
    return s


def _print_schema(s) -> str:
    """``operator<<(ostream&, const FunctionSchema&)``."""
    parts, seen_kwarg = [], False
    for a in s._arguments:
        p = a._print()
        if a._kwarg_only and not seen_kwarg:
            p, seen_kwarg = "*, " + p, True
        parts.append(p)
    if s._is_vararg:
        parts.append("...")
    head = s._name + ("." + s._overload_name if s._overload_name else "") + "(" + ", ".join(parts)
    rets = [r._print() for r in s._returns]
    if s._is_varret:
        rets.append("...")
    need_paren = not ((len(s._returns) == 1 and not s._is_varret)
                      or (not s._returns and s._is_varret))
    if len(s._returns) == 1 and not s._is_varret and rets[0].startswith("("):
        need_paren = True  # a single tuple-typed return: keep it re-parseable
    body = ", ".join(rets)
    return head + ") -> " + ("(" + body + ")" if need_paren else body)


def _first_out(args) -> int:
    return next((i for i, a in enumerate(args) if a._is_out), len(args))


def _arg_compatible(new, old, forward: bool) -> bool:
    """``Argument::isBackwardCompatibleWith`` / ``isForwardCompatibleWith``."""
    if not (new._name == old._name and new._N == old._N
            and _alias_eq(new._alias_info, old._alias_info)):
        return False
    if new._kwarg_only and not old._kwarg_only:
        return False
    if not (jt.is_subtype(new._type, old._type) if forward else jt.is_subtype(old._type, new._type)):
        return False
    if old._default is not _NO_DEFAULT and (
            new._default is _NO_DEFAULT or _ivalue_key(new._default) != _ivalue_key(old._default)):
        return False
    return not (forward and new._default is not _NO_DEFAULT and old._default is _NO_DEFAULT)


def _backward_compatible(new, old) -> bool:
    if not (new._name == old._name and new._overload_name == old._overload_name
            and new._is_vararg == old._is_vararg and new._is_varret == old._is_varret
            and len(new._returns) == len(old._returns)
            and len(new._arguments) >= len(old._arguments)):
        return False
    # returns are contravariant: the old return must accept the new one
    if not all(_arg_compatible(o, n, False) for o, n in zip(old._returns, new._returns)):
        return False
    old_out, new_out = _first_out(old._arguments), _first_out(new._arguments)
    if not all(_arg_compatible(new._arguments[i], old._arguments[i], False) for i in range(old_out)):
        return False
    if any(new._arguments[i]._default is _NO_DEFAULT for i in range(old_out, new_out)):
        return False
    return all(_arg_compatible(new._arguments[i - old_out + new_out], old._arguments[i], False)
               for i in range(old_out, len(old._arguments)))


def _forward_compatible(new, old):
    if not (new._name == old._name and new._overload_name == old._overload_name
            and new._is_vararg == old._is_vararg and new._is_varret == old._is_varret
            and len(new._returns) == len(old._returns)):
        return False, ""
    old_out, new_out = _first_out(old._arguments), _first_out(new._arguments)
    if len(old._arguments) - old_out != len(new._arguments) - new_out:
        return False, "Function schema should have the same number of out arguments"
    for i in range(min(old_out, new_out)):
        if not _arg_compatible(new._arguments[i], old._arguments[i], True):
            return False, (f"'{new._arguments[i]._name}' is not forward compatible with the older "
                           "version of the schema")
    for i in range(old_out, new_out):
        a = new._arguments[i]
        if a._default is _NO_DEFAULT:
            return False, (f"Function schema is not forward compatible since the new argument "
                           f"'{a._name}' of type {a._type._str} did not provide a default value.")
        if type(a._default) is list:
            return False, (f"Function schema is not forward compatible since the new argument "
                           f"'{a._name}' of type {a._type._str} has a container type as its "
                           "default value.")
    for i in range(old_out, len(old._arguments)):
        if not _arg_compatible(new._arguments[i - old_out + new_out], old._arguments[i], True):
            return False, (f"Out argument '" f"'{new._arguments[i]._name} is not FC with the older "
                           "version of the schema")
    return True, ""


# =============================================================================================
# Parser (torch/csrc/jit/frontend/function_schema_parser.cpp + schema_type_parser.cpp)
# =============================================================================================

_OPAQUE_TYPES: set[str] = set()  # Python types used by name in schemas (torch._library)
_CUSTOM_CLASSES: set[str] = set()  # torch::class_ names beyond csrc/ops/torchbind.py's registry
_CACHE: dict = {}
_LIST_KINDS = {"ComplexType": complex, "FloatType": float, "IntType": int, "BoolType": bool}
_LIST_ASSERT = {"FloatType": (544, "double"), "IntType": (663, "int"), "BoolType": (710, "bool"),
                "ComplexType": (589, "complex")}
_SINGLE_KINDS = frozenset(("StringType", "OptionalType", "NumberType", "IntType", "BoolType",
                           "FloatType", "ComplexType"))
# identifiers accepted as numeric defaults whatever the type (BC), with their enum values
_NAMED_DEFAULTS = {"float": 6, "complex": 9, "long": 4, "strided": 0, "Mean": 1,
                   "contiguous_format": 0}


class _Parser:
    """Upstream parses UTF-8 bytes: a non-ASCII source is parsed as its bytes (one latin-1 char
    per byte), so offsets, identifiers and messages are byte-exact; messages and string values
    are decoded back (a message cut inside a character fails to decode, as upstream's does)."""

    __slots__ = ("src", "kinds", "starts", "ends", "i", "next_id", "allow_typevars", "last",
                 "wide", "volatile")

    def __init__(self, src: str, allow_typevars: bool):
        self.wide = not src.isascii()
        if self.wide:
            src = src.encode().decode("latin-1")
        self.src = src
        self.kinds, self.starts, self.ends, _ = _lex(src)
        self.last = len(self.kinds) - 1
        self.i, self.next_id, self.allow_typevars = 0, 0, allow_typevars
        self.volatile = False  # the result depends on the opaque-type registry: do not cache
        self._check(0)

    # -- token stream --------------------------------------------------------------------------
    def _check(self, j):
        k = self.kinds[j]
        if k == "error":  # lexRaw failed: 'found' is the char where that scan began
            s, e = self.starts[j], self.ends[j]
            c = self.src[e] if e < len(self.src) else "\0"
            raise self.fail(f"expected a valid token but found '{c}' here:\n"
                            + _highlight(self.src, s, s + 1))
        if k == "bad_indent":
            raise self.fail(f"invalid indent level {self.ends[j] - self.starts[j]}:\n"
                            + _highlight(self.src, self.starts[j], self.ends[j]))

    def fail(self, message: str) -> RuntimeError:
        if self.wide:
            message = message.encode("latin-1").decode()  # may raise UnicodeDecodeError
        return RuntimeError(message)

    def rng(self, j=None):
        j = self.i if j is None else j
        return self.starts[j], self.ends[j]

    def text(self, j) -> str:
        return self.src[self.starts[j]:self.ends[j]]

    @property
    def cur(self) -> str:
        return self.kinds[self.i]

    def lookahead(self) -> str:
        j = min(self.i + 1, self.last)
        self._check(j)
        return self.kinds[j]

    def next(self) -> int:
        j = self.i
        if j < self.last:
            self.i = j + 1
            self._check(j + 1)
        return j

    def next_if(self, kind) -> bool:
        if self.kinds[self.i] == kind:
            self.next()
            return True
        return False

    def expect(self, kind) -> int:
        if self.kinds[self.i] != kind:
            raise self.fail(f"expected {kind} but found '{self.kinds[self.i]}' here:\n"
                            + _highlight(self.src, *self.rng()))
        return self.next()

    def error(self, msg, rng=None) -> RuntimeError:
        """``ErrorReport(range) << msg`` as its ``what()`` reads."""
        return self.fail("\n" + msg + ":\n" + _highlight(self.src, *(rng or self.rng())))

    def parse_list(self, begin, sep, end, callback):
        if begin is not None:
            self.expect(begin)
        if self.cur != end:
            callback()
            while self.next_if(sep):
                callback()
        if end is not None:
            self.expect(end)

    # -- declarations --------------------------------------------------------------------------
    def parse_exactly_one(self):
        result = self.parse_declaration()
        self.next_if("newline")
        self.expect("eof")
        return result

    def parse_name(self):
        name = self.text(self.expect("ident"))
        if self.next_if(":"):
            self.expect(":")
            name = name + "::" + self.text(self.expect("ident"))
        overload = ""
        if self.next_if("."):
            overload = self.text(self.expect("ident"))
        if overload == "default" or overload.startswith("__"):
            raise RuntimeError(f"{overload} is not a legal overload name for aten operators")
        return name, overload

    def parse_declaration(self):
        name, overload = self.parse_name()
        if self.cur != "(":
            return name, overload
        arguments, state = [], {"kwarg_only": False, "vararg": False, "varret": False}

        def argument():
            if state["vararg"]:
                raise self.error("... must be the last element of the argument list")
            if self.next_if("*"):
                state["kwarg_only"] = True
            elif self.next_if("dots"):
                state["vararg"] = True
            else:
                arguments.append(self.parse_argument(False, state["kwarg_only"]))

        self.parse_list("(", ",", ")", argument)
        if state["vararg"] and any(a._default is not _NO_DEFAULT for a in arguments):
            raise self.error("schemas with vararg (...) can't have default value args")
        self.expect("arrow")
        returns = []

        def ret():
            if state["varret"]:
                raise self.error("... must be the last element of the return list")
            if self.next_if("dots"):
                state["varret"] = True
            else:
                returns.append(self.parse_argument(True, False))

        if self.next_if("dots"):
            state["varret"] = True
        elif self.cur == "(":
            self.parse_list("(", ",", ")", ret)
        else:
            returns.append(self.parse_argument(True, False))
        return _init_schema(object.__new__(FunctionSchema), name, overload, tuple(arguments),
                            tuple(returns), state["vararg"], state["varret"])

    def parse_argument(self, is_return: bool, kwarg_only: bool) -> Argument:
        fake, real, alias = self.parse_fake_and_real_type()
        N, default = None, _NO_DEFAULT
        if self.next_if("["):  # a sized list: int[2]; the size hint only exists here
            fake, real = jt.list_of(fake), jt.list_of(real)
            N = _stoll(self.text(self.expect("number")))
            self.expect("]")
            alias = self._container_alias(alias)
            if self.next_if("?"):
                fake, real = jt.optional_of(fake), jt.optional_of(real)
        if is_return:
            name = self.text(self.next()) if self.cur == "ident" else ""
        else:
            name = self.text(self.expect("ident"))
            if self.next_if("="):
                default = self.parse_default(fake, fake._kind, real, N)
        return _init_argument(object.__new__(Argument), name, fake, real, N, default,
                              not is_return and kwarg_only, alias)

    # -- types ---------------------------------------------------------------------------------
    def parse_type(self):
        fake, _, alias = self.parse_fake_and_real_type()
        return fake, alias

    def _wrapped(self, make):
        self.next()
        self.expect("(")
        t = self.parse_type()[0]
        self.expect(")")
        return make(t)

    def parse_fake_and_real_type(self):
        alias = None
        word = self.text(self.i) if self.cur == "ident" else None
        if self.cur == "(":
            types = []
            self.parse_list("(", ",", ")", lambda: types.append(self.parse_type()[0]))
            fake = real = jt.tuple_of(types)
        elif word == "Tensor":
            self.next()
            fake = real = jt.TensorType.get()
            alias = self.parse_alias()
        elif word in ("Future", "Await", "RRef"):
            fake = real = self._wrapped({"Future": jt.future_of, "Await": jt.await_of,
                                         "RRef": jt.rref_of}[word])
        elif word == "Dict":
            self.next()
            self.expect("(")
            key = self.parse_type()[0]
            self.expect(",")
            value = self.parse_type()[0]
            self.expect(")")
            alias = self.parse_alias()
            fake = real = jt.dict_of(key, value)
        elif word == "Union":
            self.next()
            self.expect("(")
            types = [self.parse_type()[0]]
            while self.cur != ")":
                self.expect(",")
                types.append(self.parse_type()[0])
            self.expect(")")
            alias = self.parse_alias()
            fake = real = jt.union_of(types)
        elif word == "__torch__":
            fake = real = self.parse_custom_class()
        else:
            real = self.parse_base_type()
            fake = jt.IntType.get() if real._kind in jt.FAKE_AS_INT else real
            alias = self.parse_alias()
        while True:
            if self.cur == "[" and self.lookahead() == "]":
                self.next()
                self.next()
                fake, real = jt.list_of(fake), jt.list_of(real)
                alias = self._container_alias(alias)
            elif self.next_if("?"):
                fake, real = jt.optional_of(fake), jt.optional_of(real)
            else:
                return fake, real, alias

    def _container_alias(self, inner):
        """A list's own annotation (``Tensor[](a)``) holds its element's as contained type."""
        container = self.parse_alias()
        if inner is not None:
            if container is None:
                container = _new_alias(inner._is_write)
            container._contained.append(inner)
        return container

    def parse_base_type(self) -> Type:
        tok = self.i
        if not self.next_if("None") and not self.next_if("NoneType"):
            self.expect("ident")
        text = self.text(tok)
        while self.cur == "." and self.lookahead() == "ident":  # dotted names: opaque types
            self.next()
            text += "." + self.text(self.expect("ident"))
        if text in _OPAQUE_TYPES:
            self.volatile = True
            return jt.PyObjectType.get()
        t = jt.BASE_TYPES.get(text)
        if t is not None:
            return t
        self.volatile = True
        if self.allow_typevars and text[:1].isascii() and text[:1].islower():
            return jt.var_type(text)  # lower-case unknowns are type variables
        rng = self.rng(tok)
        if text == "double":
            raise self.error("Use `float` instead of `double` in an operator's schema string. "
                             "`float` in schema corresponds to the double type in C++", rng)
        if text == "int64_t":
            raise self.error("Use `SymInt` or `int` instead of `int64_t` in an operator's schema "
                             "string. `SymInt` corresponds to c10::SymInt in C++ while `int` in "
                             "schema corresponds to the int64_t type in C++.", rng)
        raise self.error("unknown type specifier. Common valid schema types include Tensor, "
                         "SymInt, int, float, bool, Scalar; for a full list, please see "
                         "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/"
                         "README.md#func ", rng)

    def parse_custom_class(self) -> Type:
        self.next()
        self.expect(".")
        for want in ("torch", "classes"):
            tok = self.expect("ident")
            if self.text(tok) != want:
                raise self.error(f"Expected classes namespace but got {self.text(tok)}",
                                 self.rng(tok))
            self.expect(".")
        ns = self.text(self.expect("ident"))
        self.expect(".")
        cls_tok = self.expect("ident")
        cls = self.text(cls_tok)
        if f"__torch__.torch.classes.{ns}.{cls}" not in _CUSTOM_CLASSES and not _torchbind_has(ns, cls):
            raise self.error(f"Unknown custom class type {ns}.{cls}. Please ensure it is registered.",
                             self.rng(cls_tok))
        return jt.class_type(f"__torch__.torch.classes.{ns}.{cls}")

    def parse_alias(self):
        """``Tensor(a)``, ``Tensor(a!)``, ``Tensor(a -> *)``, ``Tensor(a|b)``, ``Tensor!``."""
        if self.next_if("("):
            ai = _new_alias()
            self._alias_sets(ai._before)
            if self.next_if("!"):
                ai._is_write = True
            if self.next_if("arrow"):
                self._alias_sets(ai._after)
            else:  # no arrow: the after-set is the before-set (copied in iteration order)
                ai._after = ai._before[::-1]
            self.expect(")")
            return ai
        if self.next_if("!"):
            ai = _new_alias(True, [f"alias::${self.next_id}"])
            self.next_id += 1
            return ai
        return None

    def _alias_sets(self, sets):
        def one():
            if self.next_if("*"):
                if "alias::*" not in sets:
                    sets.append("alias::*")
            elif "alias::*" not in sets:  # after a wildcard, further names are not consumed
                s = "alias::" + self.text(self.expect("ident"))
                if s not in sets:
                    sets.append(s)
        self.parse_list(None, "|", None, one)

    # -- default values ------------------------------------------------------------------------
    def parse_default(self, arg_type, kind, real_type, N):
        rng = self.rng()
        if kind in ("TensorType", "GeneratorType", "QuantizerType"):
            self.expect("None")
            return None
        if kind in _SINGLE_KINDS:
            return self.parse_single(kind, real_type)
        if kind == "DeviceObjType":  # c10::Device(str) validates (same messages as torch.device)
            return _device(self.parse_string(self.expect("string_literal")))
        if kind == "ListType":
            elem, real_elem = arg_type._parts[0], real_type._parts[0]
            if self.cur == "ident":
                self.expect("None")
            if N is not None and self.cur != "[":  # int[2] x=1 means [1, 1]
                v = self.parse_single(elem._kind, real_elem)
                return _convert_list(self, elem._kind, rng, [v] * N)
            tok = self.expect("[")
            vs = []
            if self.cur != "]":
                vs.append(self.parse_single(elem._kind, real_elem))
                while self.next_if(","):
                    vs.append(self.parse_single(elem._kind, real_elem))
            self.expect("]")
            return _convert_list(self, elem._kind, self.rng(tok), vs)
        raise self.error("unexpected type, file a bug report", rng)

    def parse_single(self, kind, real_type):
        k = self.cur
        if k == "True" or k == "False" or k == "None":
            self.next()
            return {"True": True, "False": False, "None": None}[k]
        if k == "string_literal":
            return self.parse_string(self.next())
        if k == "ident":
            text = self.text(self.next())
            if text in _NAMED_DEFAULTS:
                return _NAMED_DEFAULTS[text]
            if _possibly_scalar_type(real_type) and text in STR_TO_DTYPE:
                return STR_TO_DTYPE[text]
            raise self.error("invalid numeric default value")
        n = ("-" + self.text(self.expect("number")) if self.next_if("-")
             else self.text(self.expect("number")))
        if kind == "ComplexType" or "j" in n:
            return complex(0, _stod(n[:-1]))
        if kind == "FloatType" or "." in n or "e" in n:
            return _stod(n)
        return _stoll(n)

    def parse_string(self, tok) -> str:
        """``parseStringLiteral``: strip quotes, resolve the escapes TorchScript knows."""
        s = self.text(tok)
        ql = 3 if s[:3] in ('"""', "'''") else 1
        s = s[ql:len(s) - ql]
        pos = s.find("\\")
        while pos >= 0:
            nxt = s[pos + 1]
            erase = 2
            if nxt in "\\'\"\n":
                c = nxt
            elif nxt in "abfnvt":
                c = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "v": "\v", "t": "\t"}[nxt]
            elif nxt == "x":
                raise self.error("unsupported hex specifier", self.rng(tok))
            elif nxt in "uU":
                raise self.error("unsupported unicode specifier", self.rng(tok))
            else:
                digits = s[pos + 1:pos + 4]
                if (pos + 3 >= len(s) or len(digits) != 3 or any(d not in "01234567" for d in digits)
                        or int(digits, 8) >= 256):
                    raise self.error(" ill formed octal specifier", self.rng(tok))
                c, erase = chr(int(digits, 8)), 4
            s = s[:pos] + c + s[pos + erase:]
            pos = s.find("\\", pos + 1)
        # the literal is bytes upstream (octal escapes make single bytes): decode them as UTF-8
        return s.encode("latin-1").decode("utf-8", "surrogateescape")


def _torchbind_has(ns: str, cls: str) -> bool:
    """TorchBind's registry (csrc/ops/torchbind.py) holds the classes upstream's C++ registers."""
    from . import torchbind  # lazily: torchbind may import this module

    return (ns, cls) in torchbind.REGISTERED


def _possibly_scalar_type(t) -> bool:
    if t._kind == "ScalarTypeType":
        return True
    return t._kind == "OptionalType" and any(map(_possibly_scalar_type, t._parts))


def _convert_list(p, kind, rng, vs):
    want = _LIST_KINDS.get(kind)
    if want is None:
        raise p.error("lists are only supported for float, int and complex types", rng)
    for v in vs:
        if type(v) is not want:
            line, name = _LIST_ASSERT[kind]
            raise _internal_assert("0", f'aten/src/ATen/core/ivalue.h":{line}', f"expected {name}")
    return list(vs)


# =============================================================================================
# Entry points
# =============================================================================================

def parse_schema_or_name(schema: str, allow_typevars: bool = True):
    """``parseSchemaOrName``: a FunctionSchema, or ``(name, overload_name)`` for a bare name."""
    key = (schema, allow_typevars)
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    if schema.startswith(("aten::", "prim::")):
        allow_typevars = True  # BC: upstream always allows type variables there
    parser = _Parser(schema, allow_typevars)
    result = parser.parse_exactly_one()
    if not parser.volatile:
        _CACHE[key] = result
    return result


def parse_schema(schema: str, allow_typevars: bool = True) -> FunctionSchema:
    """``torch._C.parse_schema``."""
    if type(schema) is str:
        hit = _CACHE.get((schema, allow_typevars))
        if type(hit) is FunctionSchema:
            return hit
    elif not isinstance(schema, str):
        raise incompatible_arguments(
            "parse_schema", ["(schema: str, allow_typevars: bool = True) -> c10::FunctionSchema"],
            (schema,))
    result = parse_schema_or_name(schema, allow_typevars)
    if not isinstance(result, FunctionSchema):
        raise RuntimeError("Tried to parse a function schema but only the operator name was given")
    return result


def _register_opaque_type(type_name: str) -> None:
    if type_name in _OPAQUE_TYPES:
        raise RuntimeError(f"Type '{type_name}' is already registered as an opaque type")
    _OPAQUE_TYPES.add(type_name)
    _CACHE.clear()  # a builtin name turned opaque would change cached parses


def _is_opaque_type_registered(type_name: str) -> bool:
    return type_name in _OPAQUE_TYPES


def _unregister_opaque_type(type_name: str) -> None:
    _OPAQUE_TYPES.discard(type_name)
    _CACHE.clear()


def register_custom_class(qualified_name: str) -> None:
    """Make ``__torch__.torch.classes.<ns>.<Name>`` known to the parser (upstream: torch::class_).
    Only failed parses depended on it, and those are not cached."""
    _CUSTOM_CLASSES.add(qualified_name)


TORCH_C = {
    "torch._C.parse_schema": parse_schema,
    "torch._C.FunctionSchema": FunctionSchema,
    "torch._C.Argument": Argument,
    "torch._C._AliasInfo": _AliasInfo,
    "torch._C._register_opaque_type": _register_opaque_type,
    "torch._C._is_opaque_type_registered": _is_opaque_type_registered,
    "torch._C._unregister_opaque_type": _unregister_opaque_type,
    **{f"torch._C.{name}": cls for name, cls in jt.PUBLIC_TYPES.items()},
}
for _f in (parse_schema, _register_opaque_type, _is_opaque_type_registered, _unregister_opaque_type):
    _f.__module__ = "torch._C"
