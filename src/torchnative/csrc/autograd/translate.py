"""Translate derivatives.yaml's C++ expressions into Python source.

The formulas are C++ expressions over tensors, scalars, optionals and int lists: method calls,
free functions (ATen ops and FunctionsManual helpers), ternaries, brace lists, a few templates
(``std::get<0>``, ``std::tuple<Tensor, Tensor>()``, ``std::vector<c10::SymInt>(n, 0)``) and one
lambda. A small Pratt parser turns each into a Python expression. Names are left free and are
resolved when the formula is compiled (formulas.py): helpers (``helpers.namespace()``) first, ATen
operators through the door otherwise. C++-only methods (``defined``, ``sym_sizes``,
``scalar_type``, ``has_value``...) become calls of ``m_<method>`` shims so that they also work on
Python numbers and ``None``.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"""
    (?P<ws>\s+|/\*.*?\*/)
  | (?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?[fFlLuU]*)
  | (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<name>(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)
  | (?P<op>->|&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!~?:,.()\[\]{}&|^;=])
""", re.VERBOSE | re.DOTALL)

# namespaces that only qualify an ATen/helper name
_DROP_NS = ("at", "c10", "native", "torch", "autograd", "generated", "details", "")

# names followed by template arguments <...>
_TEMPLATED = {"std_get", "std_tuple", "std_vector", "std_optional", "static_cast",
              "OptionalArrayRef", "std_array", "ArrayRef", "OptionalIntArrayRef"}

# C++ methods with no (or a different) Python Tensor method: called as shims m_<name>(obj, ...)
SHIM_METHODS = {
    "defined", "sym_sizes", "sizes", "sym_size", "size", "sym_numel", "numel", "sym_strides",
    "strides", "sym_stride", "stride", "scalar_type", "options", "layout", "device", "dtype",
    "has_value", "value", "value_or", "toDouble", "toFloat", "toComplexDouble", "toLong",
    "toBool", "conj", "is_complex", "is_floating_point", "dim", "vec", "is_same", "is_cpu",
    "is_xpu", "is_cuda", "mT", "mH", "is_sparse", "is_sparse_csr", "is_mkldnn", "empty",
    "guard_int", "expect_int", "sym_storage_offset", "storage_offset", "suggest_memory_format",
    "is_contiguous", "is_nested", "get", "front", "back", "item", "sgn", "abs", "neg",
    "requires_grad", "toSymInt", "as_int_unchecked", "to", "_fw_primal", "isComplex",
    "isFloatingPoint", "isIntegral", "is_non_overlapping_and_dense", "new_zeros", "new_empty",
    "new_ones", "new_full", "index", "slice", "div",
}


class TranslationError(Exception):
    pass


def tokenize(src: str) -> list[tuple[str, str]]:
    out, pos = [], 0
    while pos < len(src):
        m = _TOKEN.match(src, pos)
        if m is None:
            raise TranslationError(f"cannot tokenize at {src[pos:pos + 20]!r}")
        pos = m.end()
        kind = m.lastgroup
        if kind != "ws":
            out.append((kind, m.group(kind)))
    out.append(("end", ""))
    return out


def python_name(cxx: str) -> str:
    parts = cxx.split("::")
    while len(parts) > 1 and parts[0] in _DROP_NS:
        parts.pop(0)
    if len(parts) > 1 and parts[0] in ("at", "c10", "native"):
        parts.pop(0)
    return "_".join(p for p in parts if p)


_CONSTANTS = {"true": "True", "false": "False", "nullptr": "None", "std_nullopt": "None",
              "nullopt": "None", "Tensor": "Tensor"}

_BINARY = {"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5, "==": 6, "!=": 6, "<": 7, ">": 7,
           "<=": 7, ">=": 7, "<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10}
_PY_BINARY = {"||": "or", "&&": "and"}


class _Parser:
    def __init__(self, src: str):
        self.toks = tokenize(src)
        self.i = 0

    def peek(self, k: int = 0):
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def take(self, value: str | None = None):
        tok = self.toks[self.i]
        if value is not None and tok[1] != value:
            raise TranslationError(f"expected {value!r}, got {tok[1]!r}")
        self.i += 1
        return tok

    def parse(self) -> str:
        e = self.expr()
        if self.peek()[0] != "end":
            raise TranslationError(f"trailing input at {self.peek()[1]!r}")
        return e

    def expr(self) -> str:
        cond = self.binary(1)
        if self.peek()[1] == "?":
            self.take("?")
            a = self.expr()
            self.take(":")
            b = self.expr()
            return f"({a} if {cond} else {b})"
        return cond

    def binary(self, min_prec: int) -> str:
        left = self.unary()
        while True:
            kind, op = self.peek()
            prec = _BINARY.get(op) if kind == "op" else None
            if prec is None or prec < min_prec:
                return left
            self.take()
            right = self.binary(prec + 1)
            if op == "/":
                left = f"cdiv({left}, {right})"
            elif op == "%":
                left = f"cmod({left}, {right})"
            else:
                left = f"({left} {_PY_BINARY.get(op, op)} {right})"

    def unary(self) -> str:
        kind, op = self.peek()
        if kind == "op" and op in ("-", "!", "~", "+"):
            self.take()
            inner = self.unary()
            return {"-": f"(-{inner})", "!": f"(not {inner})", "~": f"(~{inner})",
                    "+": inner}[op]
        return self.postfix(self.primary())

    def args(self, close: str = ")") -> list[str]:
        out = []
        if self.peek()[1] == close:
            self.take(close)
            return out
        while True:
            out.append(self.expr())
            if self.peek()[1] == ",":
                self.take(",")
                continue
            self.take(close)
            return out

    def template(self) -> list[str]:
        """Raw template arguments of <...> (top-level, comma separated)."""
        self.take("<")
        depth, cur, parts = 1, [], []
        while True:
            kind, v = self.take()
            if kind == "end":
                raise TranslationError("unterminated template")
            if v == "<":
                depth += 1
            elif v == ">":
                depth -= 1
                if depth == 0:
                    parts.append("".join(cur))
                    return parts
            elif v == ">>":
                depth -= 2
                if depth <= 0:
                    parts.append("".join(cur))
                    return parts
            if v == "," and depth == 1:
                parts.append("".join(cur))
                cur = []
            else:
                cur.append(v)

    def primary(self) -> str:
        kind, v = self.take()
        if kind == "num":
            return _number(v)
        if kind == "str":
            return v
        if v == "(":
            e = self.expr()
            self.take(")")
            return f"({e})"
        if v == "{":
            return "[" + ", ".join(self.args("}")) + "]"
        if v == "[":
            return self.lambda_()
        if kind != "name":
            raise TranslationError(f"unexpected {v!r}")
        name = python_name(v)
        if name in _CONSTANTS and self.peek()[1] != "(":
            return _CONSTANTS[name]
        if name in _TEMPLATED and self.peek()[1] == "<":
            targs = self.template()
            return self.templated(name, targs)
        if self.peek()[1] == "(":
            self.take("(")
            return f"{name}({', '.join(self.args())})"
        if self.peek()[1] == "{" and name in ("IntArrayRef", "SymIntArrayRef", "DimnameList"):
            self.take("{")
            return "[" + ", ".join(self.args("}")) + "]"
        return name

    def templated(self, name: str, targs: list[str]) -> str:
        self.take("(")
        a = self.args()
        if name == "std_get":
            return f"({a[0]})[{int(targs[0])}]"
        if name == "std_tuple":
            return "(" + "".join(x + ", " for x in a) + ")" if a else \
                "(" + "None, " * len(targs) + ")"
        if name == "std_vector":
            return f"std_vector({', '.join(a)})"
        if name == "static_cast":
            return f"static_cast({targs[0]!r}, {a[0]})"
        if name in ("std_optional", "OptionalArrayRef", "OptionalIntArrayRef"):
            return a[0] if a else "None"
        return f"list({a[0]})" if a else "[]"

    def lambda_(self) -> str:
        while self.take()[1] != "]":
            pass
        self.take("(")
        params = []
        while True:
            kind, v = self.take()
            if v == ")":
                break
            if v == ",":
                continue
            if kind == "name":
                params.append(python_name(v))
        params = params[1::2] if len(params) % 2 == 0 else params  # drop the types
        self.take("{")
        self.take("return")
        body = self.expr()
        self.take(";")
        self.take("}")
        return f"(lambda {', '.join(params)}: {body})"

    def postfix(self, e: str) -> str:
        while True:
            v = self.peek()[1]
            if v in (".", "->"):
                self.take()
                _, m = self.take()
                if self.peek()[1] == "<" and m == "to":
                    targ = self.template()
                    self.take("(")
                    self.args()
                    e = f"m_to_type({e}, {targ[0]!r})"
                    continue
                if self.peek()[1] == "(":
                    self.take("(")
                    a = self.args()
                    m = m[:-7] if m.endswith("_symint") else m
                    if m in SHIM_METHODS:
                        e = f"m_{m}({', '.join([e, *a])})"
                    else:
                        e = f"{e}.{m}({', '.join(a)})"
                else:
                    e = f"m_{m}({e})" if m in SHIM_METHODS else f"{e}.{m}"
            elif v == "[":
                self.take("[")
                idx = self.expr()
                self.take("]")
                e = f"{e}[{idx}]"
            else:
                return e


def _number(v: str) -> str:
    v = v.rstrip("fFlLuU")
    if v.endswith("."):
        v += "0"
    return v


def translate(src: str) -> str:
    """Python source of the C++ expression ``src`` (raises TranslationError)."""
    return _Parser(src).parse()
