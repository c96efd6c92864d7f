"""``torch._C._jit_tree_views``: the TorchScript syntax tree ``torch.jit.frontend`` builds.

Each class takes the arguments upstream's bindings take (python_tree_views.cpp) and keeps them as
named fields, so a compiled Def can be read back: its name, its parameters with their type
expressions, its return type. Only the compile step is ours (``jit_function``); the frontend that
builds these trees, and its errors for unsupported Python, are upstream's.
"""

from __future__ import annotations

from .jit_frontend import SourceRange, SourceRangeFactory

# the operator spellings stringToKind knows (lexer.h), as the frontend passes them
_BINOPS = {"+", "-", "*", "/", "**", "%", "//", "&", "|", "^", "<<", ">>", "@", "==", "!=", "<",
           "<=", ">", ">=", "is", "is not", "in", "not in", "and", "or"}
_UNARY = {"-", "not", "~"}
_AUG = {"+", "-", "*", "/", "%", "|", "&", "^", "<<", ">>", "**", "//", "@"}


def _need(value, cls, what: str):
    if not isinstance(value, cls):
        names = cls.__name__ if isinstance(cls, type) else "/".join(c.__name__ for c in cls)
        raise TypeError(f"{what}: incompatible constructor arguments; expected "
                        f"torch._C._jit_tree_views.{names}, got {type(value).__name__}")
    return value


def _needs(values, cls, what: str) -> list:
    return [_need(v, cls, what) for v in values]


def _kind(kind: str, table: set, what: str) -> str:
    if kind not in table:
        raise RuntimeError(f"{what}: unknown operator kind {kind!r}")
    return kind


class TreeView:
    """A node's range covers its subtrees' ranges (upstream's ``Compound`` merges them), which the
    frontend relies on when it reports errors between two subexpressions."""

    _range: SourceRange

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is None:
            return

        def merged_init(self, *args, **kw):
            init(self, *args, **kw)
            if type(self) is cls:
                self._merge()

        merged_init.__wrapped__ = init
        cls.__init__ = merged_init

    def _merge(self) -> None:
        r = self._range
        start, end = r.start, r.end
        for k, v in vars(self).items():
            for child in (v if isinstance(v, list) else [v]):
                if isinstance(child, TreeView) and k != "_range":
                    start, end = min(start, child._range.start), max(end, child._range.end)
        if (start, end) != (r.start, r.end):
            self._range = SourceRange(r._source, start, end)

    def range(self) -> SourceRange:
        return self._range

    def __repr__(self):
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if k != "_range")
        return f"{type(self).__name__}({fields})"


class Ident(TreeView):
    def __init__(self, r: SourceRange, name: str):
        self._range, self._name = _need(r, SourceRange, "Ident"), _need(name, str, "Ident")

    @property
    def name(self) -> str:
        return self._name


class Expr(TreeView):
    pass


class Stmt(TreeView):
    def __new__(cls, thing=None, *args, **kwargs):
        # Stmt(def_) wraps a tree as a statement (a class body's methods); the node stays itself
        if cls is Stmt:
            return _need(thing, TreeView, "Stmt")
        return super().__new__(cls)


class EmptyTypeAnnotation(TreeView):
    def __init__(self, r: SourceRange):
        self._range = _need(r, SourceRange, "EmptyTypeAnnotation")


def _literal(kind: str):
    class Literal(Expr):
        def __init__(self, r: SourceRange):
            self._range = _need(r, SourceRange, kind)
    Literal.__name__ = Literal.__qualname__ = kind
    return Literal


_True, _False, _None = _literal("TrueLiteral"), _literal("FalseLiteral"), _literal("NoneLiteral")


def TrueLiteral(r: SourceRange):
    return _True(r)


def FalseLiteral(r: SourceRange):
    return _False(r)


def NoneLiteral(r: SourceRange):
    return _None(r)


class Param(TreeView):
    def __init__(self, type, name: Ident, kwarg_only: bool):
        self.type = None if isinstance(type, EmptyTypeAnnotation) else _need(type, Expr, "Param")
        self.name = _need(name, Ident, "Param")
        self.kwarg_only = bool(kwarg_only)
        self._range = name.range()


class Attribute(TreeView):
    def __init__(self, name: Ident, value: Expr):
        self.name, self.value = _need(name, Ident, "Attribute"), _need(value, Expr, "Attribute")
        self._range = name.range()


class Decl(TreeView):
    def __init__(self, r: SourceRange, params, return_type=None):
        self._range = _need(r, SourceRange, "Decl")
        self.params = _needs(params, Param, "Decl")
        self.return_type = None if return_type is None else _need(return_type, Expr, "Decl")


class Def(TreeView):
    def __init__(self, name: Ident, decl: Decl, body):
        self._name, self._decl = _need(name, Ident, "Def"), _need(decl, Decl, "Def")
        self.body = _needs(body, TreeView, "Def")
        self._range = name.range()

    def name(self) -> Ident:
        return self._name

    def decl(self) -> Decl:
        return self._decl


class Property(TreeView):
    def __init__(self, r: SourceRange, name: Ident, getter: Def, setter=None):
        self._range, self._name = _need(r, SourceRange, "Property"), _need(name, Ident, "Property")
        self.getter = _need(getter, Def, "Property")
        self.setter = None if setter is None else _need(setter, Def, "Property")

    def name(self) -> Ident:
        return self._name

    def getter_name(self) -> Ident:
        return self.getter.name()

    def setter_name(self):
        return None if self.setter is None else self.setter.name()


class ClassDef(TreeView):
    def __init__(self, name: Ident, body, props, assigns=()):
        self._name = _need(name, Ident, "ClassDef")
        self.body, self.props = _needs(body, TreeView, "ClassDef"), _needs(props, Property, "ClassDef")
        self.assigns = list(assigns)
        self._range = name.range()

    def method_names(self) -> list:
        return [m.name().name for m in self.body if isinstance(m, Def)]

    def property_names(self) -> list:
        return [p.name().name for p in self.props]


class WithItem(Expr):
    def __init__(self, r: SourceRange, target: Expr, var=None):
        self._range, self.target = _need(r, SourceRange, "WithItem"), _need(target, Expr, "WithItem")
        self.var = var


def _ranged(r, what):
    return _need(r, SourceRange, what)


class Delete(Stmt):
    def __init__(self, r, targets):
        self._range, self.targets = _ranged(r, "Delete"), _needs(targets, Expr, "Delete")


class Assign(Stmt):
    def __init__(self, lhs, rhs: Expr, type=None):
        self.lhs, self.rhs = _needs(lhs, Expr, "Assign"), _need(rhs, Expr, "Assign")
        self.type = None if type is None else _need(type, Expr, "Assign")
        self._range = self.lhs[0].range() if self.lhs else rhs.range()


class AugAssign(Stmt):
    def __init__(self, lhs: Expr, kind: str, rhs: Expr):
        self.lhs, self.rhs = _need(lhs, Expr, "AugAssign"), _need(rhs, Expr, "AugAssign")
        self.kind = _kind(kind, _AUG, "AugAssign")
        self._range = lhs.range()


class Return(Stmt):
    def __init__(self, r, value=None):
        self._range = _ranged(r, "Return")
        self.value = None if value is None else _need(value, Expr, "Return")


class Raise(Stmt):
    def __init__(self, r, expr: Expr):
        self._range, self.expr = _ranged(r, "Raise"), _need(expr, Expr, "Raise")


class Assert(Stmt):
    def __init__(self, r, test: Expr, msg=None):
        self._range, self.test = _ranged(r, "Assert"), _need(test, Expr, "Assert")
        self.msg = None if msg is None else _need(msg, Expr, "Assert")


class Pass(Stmt):
    def __init__(self, r):
        self._range = _ranged(r, "Pass")


class Break(Stmt):
    def __init__(self, r):
        self._range = _ranged(r, "Break")


class Continue(Stmt):
    def __init__(self, r):
        self._range = _ranged(r, "Continue")


class Dots(Expr):
    def __init__(self, r):
        self._range = _ranged(r, "Dots")


class If(Stmt):
    def __init__(self, r, cond: Expr, true_branch, false_branch):
        self._range, self.cond = _ranged(r, "If"), _need(cond, Expr, "If")
        self.true_branch = _needs(true_branch, TreeView, "If")
        self.false_branch = _needs(false_branch, TreeView, "If")


class While(Stmt):
    def __init__(self, r, cond: Expr, body):
        self._range, self.cond = _ranged(r, "While"), _need(cond, Expr, "While")
        self.body = _needs(body, TreeView, "While")


class With(Stmt):
    def __init__(self, r, targets, body):
        self._range, self.targets = _ranged(r, "With"), _needs(targets, WithItem, "With")
        self.body = _needs(body, TreeView, "With")


class For(Stmt):
    def __init__(self, r, targets, itrs, body):
        self._range = _ranged(r, "For")
        self.targets, self.itrs = _needs(targets, Expr, "For"), _needs(itrs, Expr, "For")
        self.body = _needs(body, TreeView, "For")


class ExprStmt(Stmt):
    def __init__(self, expr: Expr):
        self.expr = _need(expr, Expr, "ExprStmt")
        self._range = expr.range()


class Var(Expr):
    def __init__(self, name: Ident):
        self._name = _need(name, Ident, "Var")
        self._range = name.range()

    @property
    def name(self) -> Ident:
        return self._name


class BinOp(Expr):
    def __init__(self, kind: str, lhs: Expr, rhs: Expr):
        self.kind = _kind(kind, _BINOPS, "BinOp")
        self.lhs, self.rhs = _need(lhs, Expr, "BinOp"), _need(rhs, Expr, "BinOp")
        self._range = lhs.range()


class UnaryOp(Expr):
    def __init__(self, r, kind: str, expr: Expr):
        self._range, self.kind = _ranged(r, "UnaryOp"), _kind(kind, _UNARY, "UnaryOp")
        self.expr = _need(expr, Expr, "UnaryOp")


class Const(Expr):
    def __init__(self, r, value: str):
        self._range, self.value = _ranged(r, "Const"), _need(value, str, "Const")


class StringLiteral(Expr):
    def __init__(self, r, value: str):
        self._range, self.value = _ranged(r, "StringLiteral"), _need(value, str, "StringLiteral")


class Apply(Expr):
    def __init__(self, expr: Expr, args, kwargs):
        self.callee = _need(expr, Expr, "Apply")
        self.args, self.kwargs = _needs(args, Expr, "Apply"), _needs(kwargs, Attribute, "Apply")
        self._range = expr.range()


class Select(Expr):
    def __init__(self, expr: Expr, field: Ident):
        self.value, self.selector = _need(expr, Expr, "Select"), _need(field, Ident, "Select")
        self._range = expr.range()


class TernaryIf(Expr):
    def __init__(self, cond: Expr, true_expr: Expr, false_expr: Expr):
        self.cond = _need(cond, Expr, "TernaryIf")
        self.true_expr = _need(true_expr, Expr, "TernaryIf")
        self.false_expr = _need(false_expr, Expr, "TernaryIf")
        self._range = cond.range()


class ListComp(Expr):
    def __init__(self, r, elt: Expr, target: Expr, iter: Expr):
        self._range = _ranged(r, "ListComp")
        self.elt, self.target, self.iter = (_need(e, Expr, "ListComp") for e in (elt, target, iter))


class DictComp(Expr):
    def __init__(self, r, key: Expr, value: Expr, target: Expr, iter: Expr):
        self._range = _ranged(r, "DictComp")
        self.key, self.value, self.target, self.iter = (
            _need(e, Expr, "DictComp") for e in (key, value, target, iter))


class ListLiteral(Expr):
    def __init__(self, r, args):
        self._range, self.elements = _ranged(r, "ListLiteral"), _needs(args, Expr, "ListLiteral")


class TupleLiteral(Expr):
    def __init__(self, r, args):
        self._range, self.elements = _ranged(r, "TupleLiteral"), _needs(args, Expr, "TupleLiteral")


class DictLiteral(Expr):
    def __init__(self, r, keys, values):
        self._range = _ranged(r, "DictLiteral")
        self.keys, self.values = _needs(keys, Expr, "DictLiteral"), _needs(values, Expr, "DictLiteral")


class Subscript(Expr):
    def __init__(self, base: Expr, subscript_exprs):
        self.value = _need(base, Expr, "Subscript")
        self.subscript_exprs = _needs(subscript_exprs, Expr, "Subscript")
        self._range = base.range()


class SliceExpr(Expr):
    def __init__(self, r, lower=None, upper=None, step=None):
        self._range = _ranged(r, "SliceExpr")
        self.lower, self.upper, self.step = (
            None if e is None else _need(e, Expr, "SliceExpr") for e in (lower, upper, step))


class Starred(Expr):
    def __init__(self, r, expr: Expr):
        self._range, self.expr = _ranged(r, "Starred"), _need(expr, Expr, "Starred")


_CLASSES = [TreeView, Ident, Param, Attribute, Stmt, Expr, Def, Property, ClassDef, Decl, Delete,
            WithItem, Assign, AugAssign, Return, Raise, Assert, Pass, Break, Continue, Dots, If,
            While, With, For, ExprStmt, Var, BinOp, UnaryOp, Const, StringLiteral, Apply, Select,
            TernaryIf, ListComp, DictComp, ListLiteral, TupleLiteral, DictLiteral, Subscript,
            SliceExpr, Starred, EmptyTypeAnnotation]
for _c in _CLASSES:
    _c.__module__ = "torch._C._jit_tree_views"

TORCH_C = {f"torch._C._jit_tree_views.{c.__name__}": c for c in _CLASSES}
TORCH_C.update({f"torch._C._jit_tree_views.{f.__name__}": f
                for f in (TrueLiteral, FalseLiteral, NoneLiteral)})
TORCH_C["torch._C._jit_tree_views.SourceRange"] = SourceRange
TORCH_C["torch._C._jit_tree_views.SourceRangeFactory"] = SourceRangeFactory
