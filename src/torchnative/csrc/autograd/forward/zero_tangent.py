"""Upstream's efficient zero tensors in forward formulas.

Upstream's generated code gives an input without a tangent the tangent
``at::_efficientzerotensor``, and the ZeroTensor dispatch key then short-circuits the arithmetic
the formulas do with it (BinaryOps.cpp's ``mul_zerotensor``, ``add_zerotensor``,
``sub_zerotensor``, ``div_zerotensor``): ``Z * x`` is a zero tensor, ``y + Z`` is ``y`` itself
(copied to the broadcast shape), ``Z - y`` is ``-y``, ``Z / x`` a zero tensor (``x / Z`` is
+inf). Views of a zero tensor stay zero tensors; any other operator sees plain zeros (upstream's
fallback materializes them). The difference is visible in the sign of zeros (``-0.0 + Z`` stays
``-0.0`` where ``-0.0 + 0.0`` is ``0.0``) and where the other side is infinite or NaN
(``Z * inf`` is 0).

Here a zero tangent is a zeros tensor marked ``_tn_zero``; the formulas' ``+ - * /`` are compiled
into the functions below (formulas.py), and the views a formula takes of a marked tensor are
marked too.
"""

from __future__ import annotations

from ...core.tensor import TensorBase

# view methods a formula calls on tangents (upstream registers views for the ZeroTensor key)
VIEWS = frozenset((
    "expand", "expand_as", "view", "view_as", "reshape", "reshape_as", "transpose", "t", "mT",
    "mH", "permute", "unsqueeze", "squeeze", "narrow", "select", "slice", "diagonal",
    "as_strided", "unflatten", "movedim", "alias", "conj", "m_conj", "unfold", "swapaxes",
    "swapdims", "expand_symint", "view_symint", "narrow_symint", "as_strided_symint",
    "slice_symint", "select_symint"))


def zero(shape, dtype):
    import torch

    z = torch.zeros(shape, dtype=dtype)
    z._tn_zero = True
    return z


def is_zero(t) -> bool:
    return isinstance(t, TensorBase) and getattr(t, "_tn_zero", False)


def _out(a, b):
    import torch

    shape = torch.broadcast_shapes(_shape(a), _shape(b))
    return shape, torch.result_type(a, b)


def _shape(x):
    return tuple(x.shape) if isinstance(x, TensorBase) else ()


def _like(x, shape, dtype):
    """``x`` copied to the broadcast shape and the promoted dtype (add_zerotensor's
    get_out_like)."""
    import torch

    if not isinstance(x, TensorBase):
        return torch.full(shape, x, dtype=dtype)
    return x.expand(shape).to(dtype, copy=True)


def zt_add(a, b):
    za, zb = is_zero(a), is_zero(b)
    if not (za or zb):
        return a + b
    shape, dtype = _out(a, b)
    if za and zb:
        return zero(shape, dtype)
    return _like(b if za else a, shape, dtype)


def zt_sub(a, b):
    za, zb = is_zero(a), is_zero(b)
    if not (za or zb):
        return a - b
    shape, dtype = _out(a, b)
    if za and zb:
        return zero(shape, dtype)
    return _like(a, shape, dtype) if zb else _like(b, shape, dtype).mul(-1)


def zt_mul(a, b):
    if not (is_zero(a) or is_zero(b)):
        return a * b
    return zero(*_out(a, b))


def zt_div(a, b):
    import torch

    from ..cpp_shims import cdiv

    za, zb = is_zero(a), is_zero(b)
    if not (za or zb):
        return cdiv(a, b)
    shape, dtype = _out(a, b)
    if za and zb:
        return torch.full(shape, float("nan"), dtype=dtype)
    if za:
        return zero(shape, dtype)
    return torch.full(shape, float("inf"), dtype=dtype)


def zt_maybe_multiply(t, s):
    """``maybe_multiply``: a scalar multiple of a zero tensor is a zero tensor."""
    from ..manual.pointwise import maybe_multiply

    if is_zero(t):
        return zero(*_out(t, s))
    return maybe_multiply(t, s)


def zt_view(src, result):
    """``result``, a view a formula took of ``src``: a zero tensor if ``src`` is one."""
    if is_zero(src) and isinstance(result, TensorBase) and result is not src:
        result._tn_zero = True
    return result


def compile_zero_aware(src: str) -> str:
    """The formula's ``+ - * /`` as the functions above, ``maybe_multiply`` and ``cdiv`` too,
    and its views of a name marked when the name is a zero tensor."""
    import ast

    tree = ast.parse(src, mode="eval")
    ops = {ast.Add: "zt_add", ast.Sub: "zt_sub", ast.Mult: "zt_mul", ast.Div: "zt_div"}
    names = {"maybe_multiply": "zt_maybe_multiply", "cdiv": "zt_div"}

    class Rewrite(ast.NodeTransformer):
        def visit_BinOp(self, node):
            self.generic_visit(node)
            fn = ops.get(type(node.op))
            if fn is None:
                return node
            return ast.Call(ast.Name(fn, ast.Load()), [node.left, node.right], [])

        def visit_Call(self, node):
            self.generic_visit(node)
            f = node.func
            if isinstance(f, ast.Name) and f.id in names:
                node.func = ast.Name(names[f.id], ast.Load())
                return node
            src_name = None
            if isinstance(f, ast.Attribute) and f.attr in VIEWS and isinstance(f.value, ast.Name):
                src_name = f.value.id
            elif isinstance(f, ast.Name) and (f.id in VIEWS or f.id.removeprefix(
                    "_cpp_method_") in VIEWS) and node.args and isinstance(node.args[0], ast.Name):
                src_name = node.args[0].id
            if src_name is None:
                return node
            return ast.Call(ast.Name("zt_view", ast.Load()),
                            [ast.Name(src_name, ast.Load()), node], [])

        def visit_Attribute(self, node):
            self.generic_visit(node)
            if node.attr in VIEWS and isinstance(node.value, ast.Name) and \
                    isinstance(node.ctx, ast.Load) and node.attr in ("mT", "mH"):
                return ast.Call(ast.Name("zt_view", ast.Load()),
                                [ast.Name(node.value.id, ast.Load()), node], [])
            return node

    tree = ast.fix_missing_locations(Rewrite().visit(tree))
    return ast.unparse(tree)
