"""Contractions written, as upstream's C++ writes them (LinearAlgebra.cpp, Linear.cpp), in terms
of other operators called through the door: outer, inner, tensordot, einsum (left-to-right, or
along a given path; pairs reduce to bmm through sumproduct_pair), bilinear, linalg_matmul; and
the _trilinear kernel bilinear reaches.
"""

from __future__ import annotations

import numpy as np

from .support.common import as_compute, int_list, wrap
from .support.broadcast import infer_size
from ..dispatch.call import call
from ..ops.kernel_registry import kernel


@kernel("linalg_matmul", composite=True)
def linalg_matmul(self, other):
    return call("matmul", self, other)


@kernel("linalg_matmul.out", composite=True)
def linalg_matmul_out(self, other, *, out):
    return call("matmul.out", self, other, out=out)


def _check_1d(t, name, fn):
    if t.dim() != 1:
        raise RuntimeError(f"{fn}: Expected 1-D argument {name}, but got {t.dim()}-D")


@kernel("outer", composite=True)
def outer(self, vec2):
    _check_1d(self, "self", "outer")
    _check_1d(vec2, "vec2", "outer")
    return call("mul.Tensor", call("reshape", self, [self._size[0], 1]), vec2)


@kernel("outer.out", composite=True)
def outer_out(self, vec2, *, out):
    _check_1d(self, "self", "outer")
    _check_1d(vec2, "vec2", "outer")
    return call("mul.out", call("reshape", self, [self._size[0], 1]), vec2, out=out)


@kernel("inner", composite=True)
def inner(self, other):
    if self.dim() == 0 or other.dim() == 0:
        return call("mul.Tensor", self, other)
    if self._size[-1] != other._size[-1]:
        raise RuntimeError("inner() the last dimension must match on both input tensors but got "
                           f"shapes {int_list(self._size)} and {int_list(other._size)}")
    return call("tensordot", self, other, [-1], [-1])


@kernel("inner.out", composite=True)
def inner_out(self, other, *, out):
    if self.dim() == 0 or other.dim() == 0:
        return call("mul.out", self, other, out=out)
    if self._size[-1] != other._size[-1]:
        raise RuntimeError("inner() the last dimension must match on both input tensors but got "
                           f"shapes {int_list(self._size)} and {int_list(other._size)}")
    return call("tensordot.out", self, other, [-1], [-1], out=out)


def _wrap(d, n):
    if not -max(n, 1) <= d < max(n, 1):
        raise IndexError(f"Dimension out of range (expected to be in range of [{-max(n, 1)}, "
                         f"{max(n, 1) - 1}], but got {d})")
    return d % max(n, 1)


def _bitset(dims, n):
    seen = set()
    for d in dims:
        w = _wrap(d, n)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    return seen


@kernel("tensordot", composite=True)
def tensordot(self, other, dims_self, dims_other):
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    if self._dtype is not other._dtype:
        raise RuntimeError("both inputs should have same dtype")
    csize = 1
    t1, t2 = self, other
    for d1, d2 in zip(dims_self, dims_other):
        s1, s2 = self.size(d1), other.size(d2)
        if s2 == 1:  # broadcast dimensions sum right away, in the inputs' dtype
            t1 = call("sum.dim_IntList", t1, [d1], True, dtype=t1.dtype)
        elif s1 == 1:
            t2 = call("sum.dim_IntList", t2, [d2], True, dtype=t2.dtype)
        else:
            if s1 != s2:
                raise RuntimeError(f"contracted dimensions need to match, but first has size {s1} "
                                   f"in dim {d1} and second has size {s2} in dim {d2}")
            csize *= s1
    c1, c2 = _bitset(dims_self, self.dim()), _bitset(dims_other, other.dim())
    p1, p2, rsizes = [], [], []
    size1 = size2 = 1
    for i in range(self.dim()):
        if i not in c1:
            p1.append(i)
            size1 *= t1._size[i]
            rsizes.append(t1._size[i])
    p1 += list(dims_self)
    p2 += list(dims_other)
    for i in range(other.dim()):
        if i not in c2:
            p2.append(i)
            size2 *= t2._size[i]
            rsizes.append(t2._size[i])
    t1 = call("reshape", call("permute", t1, p1), [size1, csize])
    t2 = call("reshape", call("permute", t2, p2), [csize, size2])
    return call("reshape", call("mm", t1, t2), rsizes)


@kernel("tensordot.out", composite=True)
def tensordot_out(self, other, dims_self, dims_other, *, out):
    result = tensordot(self, other, dims_self, dims_other)
    if result._dtype is not out._dtype:
        raise RuntimeError(f"tensordot: Expected the output tensor to have dtype "
                           f"{result._dtype._cpp_name}, but got an output tensor with dtype "
                           f"{out._dtype._cpp_name}")
    from ..dispatch.structured import resize_out

    resize_out(out, result._size)
    call("copy_", out, result)
    return out


# ---- einsum -----------------------------------------------------------------------------------

_LETTERS = 26
_TOTAL = 2 * _LETTERS
_ELLIPSIS = _TOTAL


def _subscript(c: str) -> int:
    return ord(c) - ord("A") if c.isupper() else ord(c) - ord("a") + _LETTERS


def _label(s: int) -> str:
    return chr(s + ord("A")) if s < _LETTERS else chr(s - _LETTERS + ord("a"))


def _is_alpha(c: str) -> bool:
    return ("a" <= c <= "z") or ("A" <= c <= "Z")


def sumproduct_pair(left, right, sum_dims, keepdim):
    """(left * right).sum(sum_dims) through permute, reshape and bmm (Linear.cpp)."""
    if left.dim() != right.dim():
        raise RuntimeError("number of dimensions must match")
    if not sum_dims:
        return call("mul.Tensor", left, right)
    dim = left.dim()
    sums = set(sum_dims)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(dim):
        sl, sr = left._size[i] != 1, right._size[i] != 1
        if i in sums:
            if sl and sr:
                if left._size[i] != right._size[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left._size[i]
            elif sl:
                left = call("sum.dim_IntList", left, [i], True)
            elif sr:
                right = call("sum.dim_IntList", right, [i], True)
        elif sl and sr:
            if left._size[i] != right._size[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left._size[i]
        elif sl:
            lo.append(i)
            lo_size *= left._size[i]
        else:
            ro.append(i)
            ro_size *= right._size[i]
    out_size = [left._size[d] for d in lro] + [left._size[d] for d in lo] + \
        [1] * len(sum_dims) + [right._size[d] for d in ro]
    lperm = lro + lo + list(sum_dims) + ro
    rperm = lro + list(sum_dims) + ro + lo
    operm = [-1] * len(out_size)
    for i, d in enumerate(lro + lo + list(sum_dims) + ro):
        operm[d] = i
    left = call("reshape", call("permute", left, lperm), [lro_size, lo_size, sum_size])
    right = call("reshape", call("permute", right, rperm), [lro_size, sum_size, ro_size])
    result = call("permute", call("view", call("bmm", left, right), out_size), operm)
    if not keepdim:
        sizes = [s for i, s in enumerate(result._size) if i not in sums]
        result = call("view", result, sizes)
    return result


def _parse_lhs(lhs, num_ops):
    op_labels = [[] for _ in range(num_ops)]
    ell = False
    cur = 0
    i = 0
    while i < len(lhs):
        c = lhs[i]
        if c == " ":
            pass
        elif c == ".":
            if ell:
                raise RuntimeError(f"einsum(): found '.' for operand {cur} for which an ellipsis "
                                   "was already found")
            if not (i + 2 < len(lhs) and lhs[i + 1] == "." and lhs[i + 2] == "."):
                raise RuntimeError(f"einsum(): found '.' for operand {cur} that is not part of "
                                   "any ellipsis")
            i += 2
            op_labels[cur].append(_ELLIPSIS)
            ell = True
        elif c == ",":
            cur += 1
            if cur >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the "
                                   "equation")
            ell = False
        else:
            if not _is_alpha(c):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the "
                                   "equation string, subscripts must be in [a-zA-Z]")
            op_labels[cur].append(_subscript(c))
        i += 1
    if cur != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return op_labels


@kernel("einsum", composite=True)
def einsum(equation, tensors, *, path=None):
    operands = list(tensors)
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    num_ops = len(operands)
    if path is not None:
        path_size = 1 if num_ops == 1 else (num_ops - 1) * 2
        if len(path) != path_size:
            raise RuntimeError("einsum(): expected contraction path given in path parameter to "
                               f"have size {path_size} but got {len(path)}")
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_lhs(lhs, num_ops)

    label_count = [0] * _TOTAL
    ell_num_dim = 0
    for i, op in enumerate(operands):
        ndims, nlabels, has_ell = op.dim(), len(op_labels[i]), False
        for lab in op_labels[i]:
            if lab == _ELLIPSIS:
                nlabels -= 1
                has_ell = True
                ell_num_dim = max(ell_num_dim, ndims - nlabels)
            else:
                label_count[lab] += 1
        if not (nlabels <= ndims if has_ell else nlabels == ndims):
            detail = (") is more than the number of dimensions (" if has_ell else
                      ") does not match the number of dimensions (")
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nlabels}"
                               f"{detail}{ndims}) for operand {i}"
                               f"{'' if has_ell else ' and no ellipsis was given'}")

    perm_index_of = [-1] * _TOTAL
    perm_index = ell_index = 0
    ell_in_output = False
    if arrow < 0:
        perm_index = ell_num_dim
        ell_in_output = True
        for lab in range(_TOTAL):
            if label_count[lab] == 1:
                perm_index_of[lab] = perm_index
                perm_index += 1
    else:
        rhs = equation[arrow + 2:]
        i = 0
        while i < len(rhs):
            c = rhs[i]
            if c == " ":
                pass
            elif c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was "
                                       "already found")
                if not (i + 2 < len(rhs) and rhs[i + 1] == "." and rhs[i + 2] == "."):
                    raise RuntimeError("einsum(): found '.' for output that is not part of any "
                                       "ellipsis (...)")
                i += 2
                ell_index = perm_index
                perm_index += ell_num_dim
                ell_in_output = True
            else:
                if not _is_alpha(c):
                    raise RuntimeError(f"einsum(): invalid subscript given at index "
                                       f"{len(lhs) + 2 + i} in the equation string, subscripts "
                                       "must be in [a-zA-Z]")
                s = _subscript(c)
                if not (label_count[s] > 0 and perm_index_of[s] == -1):
                    why = (" appears more than once in the output" if perm_index_of[s] > -1 else
                           " does not appear in the equation for any input operand")
                    raise RuntimeError(f"einsum(): output subscript {c}{why}")
                perm_index_of[s] = perm_index
                perm_index += 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index = perm_index
        perm_index += ell_num_dim
    for lab in range(_TOTAL):
        if label_count[lab] > 0 and perm_index_of[lab] == -1:
            perm_index_of[lab] = perm_index
            perm_index += 1

    label_size = [1] * _TOTAL
    ell_sizes = [1] * ell_num_dim
    dim_counts = [0] * perm_index
    ops = []
    for i, op in enumerate(operands):
        permutation = [-1] * perm_index
        dim = 0
        for s in op_labels[i]:
            if s == _ELLIPSIS:
                ndim = operands[i].dim() - (len(op_labels[i]) - 1)
                for j in range(ell_num_dim - ndim, ell_num_dim):
                    size = op.size(dim)
                    if size != 1:
                        if not (ell_sizes[j] == 1 or ell_sizes[j] == size):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}has "
                                f"size {size} which does not broadcast with previously seen "
                                f"ellipsis with size {ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = size
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j] = dim
                    dim += 1
            elif permutation[perm_index_of[s]] == -1:
                size = op.size(dim)
                if size != 1:
                    if not (label_size[s] == 1 or label_size[s] == size):
                        raise RuntimeError(
                            f"einsum(): subscript {_label(s)} has size {size} for operand {i} "
                            f"which does not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = size
                    dim_counts[perm_index_of[s]] += 1
                permutation[perm_index_of[s]] = dim
                dim += 1
            else:  # a repeated label: take the diagonal
                prev = permutation[perm_index_of[s]]
                if op.size(dim) != op.size(prev):
                    raise RuntimeError(
                        f"einsum(): subscript {_label(s)} is repeated for operand {i} but the "
                        f"sizes don't match, {op.size(dim)} != {op.size(prev)}")
                op = call("movedim.int", call("diagonal", op, 0, prev, dim), -1, prev)
        for k, val in enumerate(permutation):
            if val == -1:
                op = call("unsqueeze", op, dim)
                permutation[k] = dim
                dim += 1
        ops.append(call("permute", op, permutation))

    steps = list(path) if path is not None else []
    while len(ops) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = steps.pop(0), steps.pop(0)
            if j < i:
                i, j = j, i
            if not (i != j and i >= 0 and j < len(ops)):
                why = ("cannot contract an operand with itself" if i == j else
                       "operand index is out of bounds")
                raise RuntimeError(f"einsum(): invalid contraction ({i}, {j}) {why}")
        a, b = ops[i], ops[j]
        del ops[j]
        del ops[i]
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_num_dim, perm_index):
            if a._size[d] != 1 and b._size[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a._size[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b._size[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = call("sum.dim_IntList", a, a_sum, True)
        if b_sum:
            b = call("sum.dim_IntList", b, b_sum, True)
        r = sumproduct_pair(a, b, sum_dims, True)
        if path is not None:
            ops.append(r)
        else:
            ops.insert(0, r)

    if perm_index - out_num_dim > 0:
        if num_ops > 1:
            sizes = list(ops[0]._size)
            for d in range(perm_index - 1, out_num_dim - 1, -1):
                del sizes[d]
            return call("view", ops[0], sizes)
        return call("sum.dim_IntList", ops[0], list(range(out_num_dim, perm_index)))
    return ops[0]


# ---- bilinear ---------------------------------------------------------------------------------

@kernel("_trilinear")
def _trilinear(i1, i2, i3, expand1, expand2, expand3, sumdim, unroll_dim=1):
    """(i1.unsqueeze(expand1) * i2.unsqueeze(expand2) * i3.unsqueeze(expand3)).sum(sumdim), as
    one numpy einsum, float32 accumulated in float64 and rounded once (upstream's unrolled
    sumproducts round in an order we do not reproduce)."""
    total = i1.dim() + len(expand1)
    if not 0 <= unroll_dim < total:
        raise RuntimeError(f"unroll_dim must be in [0,{total - 1}]")
    letters = [chr(ord("a") + k) for k in range(total)]
    subs = []
    for t, exp in ((i1, expand1), (i2, expand2), (i3, expand3)):
        e = {d % total for d in exp}
        subs.append("".join(letters[k] for k in range(total) if k not in e))
    sd = {d % total for d in sumdim}
    out_sub = "".join(letters[k] for k in range(total) if k not in sd)
    dt = i1._dtype
    vals = [as_compute(t, dt) for t in (i1, i2, i3)]
    if vals[0].dtype == np.float32:
        vals = [v.astype(np.float64) for v in vals]
    res = np.einsum(f"{subs[0]},{subs[1]},{subs[2]}->{out_sub}", *vals, optimize=True)
    return wrap(np.ascontiguousarray(res), dt)


@kernel("bilinear", composite=True)
def bilinear(input1, input2, weight, bias=None):
    if bias is not None and bias._dtype is not input1._dtype:
        raise RuntimeError(f"expected scalar type {input1._dtype._cpp_name} but found "
                           f"{bias._dtype._cpp_name}")
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and "
                           f"{input2.dim()}")
    for i in range(input1.dim() - 1):
        if input1._size[i] != input2._size[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                               f"{input1._size[i]} and {input2._size[i]}")
    if input1._size[-1] != weight.size(1):
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1._size[-1]} but expected {weight.size(1)}")
    if input2._size[-1] != weight.size(2):
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2._size[-1]} but expected {weight.size(2)}")
    if bias is not None and bias.size(0) != weight.size(0):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.size(0)} but expected {weight.size(0)}")
    out_size = list(input1._size[:-1]) + [weight.size(0)]
    f1 = call("reshape", input1, [-1, input1._size[-1]])
    f2 = call("reshape", input2, [-1, input2._size[-1]])
    out = call("reshape", call("_trilinear", f1, weight, f2, [1, 3], [0], [1, 2], [2, 3], 1),
               out_size)
    if bias is not None:
        out = call("add.Tensor", out, bias)
    return out


# ---- vecdot, kron, distances ------------------------------------------------------------------

@kernel("linalg_vecdot", composite=True)
def linalg_vecdot(x, y, *, dim=-1):
    if not (x._dtype.is_floating_point or x._dtype.is_complex):
        raise RuntimeError("linalg.vecdot: Expected a floating point or complex tensor as input. "
                           f"Got {x._dtype._cpp_name}")
    if x._dtype is not y._dtype:
        raise RuntimeError("linalg.vecdot: Expected x and y to have the same dtype, but found x of "
                           f"type {x._dtype._cpp_name} and y of type {y._dtype._cpp_name} instead")
    lhs = call("conj", x) if x._dtype.is_complex else x
    return call("sum.dim_IntList", call("mul.Tensor", lhs, y), [dim])


@kernel("linalg_vecdot.out", composite=True)
def linalg_vecdot_out(x, y, *, dim=-1, out):
    if not (x._dtype.is_floating_point or x._dtype.is_complex):
        raise RuntimeError("linalg.vecdot: Expected a floating point or complex tensor as input. "
                           f"Got {x._dtype._cpp_name}")
    if x._dtype is not y._dtype:
        raise RuntimeError("linalg.vecdot: Expected x and y to have the same dtype, but found x of "
                           f"type {x._dtype._cpp_name} and y of type {y._dtype._cpp_name} instead")
    lhs = call("conj", x) if x._dtype.is_complex else x
    return call("sum.IntList_out", call("mul.Tensor", lhs, y), [dim], out=out)


@kernel("kron.out", composite=True)
def kron_out(self, other, *, out):
    n = max(self.dim(), other.dim())
    pad_a, pad_b = n - self.dim(), n - other.dim()
    a_shape, b_shape, out_shape = [], [], []
    for i in range(n):
        a = self._size[i - pad_a] if i >= pad_a else 1
        b = other._size[i - pad_b] if i >= pad_b else 1
        a_shape += [a, 1]
        b_shape += [1, b]
        out_shape.append(a * b)
    from ..dispatch.structured import resize_out

    resize_out(out, out_shape)
    mul_shape = [x for pair in zip(a_shape[0::2], b_shape[1::2]) for x in pair]
    a_view, b_view = call("_unsafe_view", self, a_shape), call("_unsafe_view", other, b_shape)
    call("mul.out", a_view, b_view, out=call("_unsafe_view", out, mul_shape))
    return out


@kernel("kron", composite=True)
def kron(self, other):
    n = max(self.dim(), other.dim())
    pad_a, pad_b = n - self.dim(), n - other.dim()
    a_shape, b_shape, out_shape = [], [], []
    for i in range(n):
        a = self._size[i - pad_a] if i >= pad_a else 1
        b = other._size[i - pad_b] if i >= pad_b else 1
        a_shape += [a, 1]
        b_shape += [1, b]
        out_shape.append(a * b)
    prod = call("mul.Tensor", call("_unsafe_view", self, a_shape),
                call("_unsafe_view", other, b_shape))
    return call("_unsafe_view", prod, out_shape)


@kernel("pairwise_distance", composite=True)
def pairwise_distance(x1, x2, p=2.0, eps=1e-06, keepdim=False):
    inner = max(x1.dim(), x2.dim()) - 1
    diff = call("add.Scalar", call("sub.Tensor", x1, x2), eps)
    return call("norm.ScalarOpt_dim", diff, p, [inner], keepdim)


@kernel("cosine_similarity", composite=True)
def cosine_similarity(x1, x2, dim=1, eps=1e-08):
    from .support.common import result_type

    common = result_type(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{common._cpp_name}")
    t1 = call("_to_copy", x1, dtype=common) if not (x1._dtype.is_floating_point or
                                                    x1._dtype.is_complex) else x1
    t2 = call("_to_copy", x2, dtype=common) if not (x2._dtype.is_floating_point or
                                                    x2._dtype.is_complex) else x2
    if t1._size != t2._size:  # expand_outplace: only the ones whose shape differs
        shape = _bshape(t1, t2)
        t1 = t1 if t1._size == shape else call("expand", t1, list(shape))
        t2 = t2 if t2._size == shape else call("expand", t2, list(shape))
    n1 = call("clone", call("linalg_vector_norm", t1, 2, [dim], True), memory_format=None)
    n2 = call("clone", call("linalg_vector_norm", t2, 2, [dim], True), memory_format=None)
    eps_t = call("scalar_tensor", eps, dtype=n1._dtype, layout=None, device=n1.device,
                 pin_memory=None)
    call("clamp_min_.Tensor", n1, eps_t)
    call("clamp_min_.Tensor", n2, eps_t)
    right = call("div.Tensor", t2, n2)
    return call("sum.dim_IntList", call("mul.Tensor", call("div.Tensor", t1, n1), right), [dim])


def _bshape(a, b):
    return infer_size(a._size, b._size)


def _check_cdist(x1, x2):
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1._size[-1] != x2._size[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1._size[-1]} "
                           f"X2: {x2._size[-1]}")


def _use_mm(p, mode, r1, r2):
    return p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25)))


def _cdist_impl(x1, x2, p, compute_mode):
    for name, t in (("X1", x1), ("X2", x2)):
        if not t._dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{t._dtype._cpp_name}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mode = 0 if compute_mode is None else compute_mode
    if not 0 <= mode <= 2:
        raise RuntimeError(f"possible modes: 0, 1, 2, but was: {mode}")
    r1, c1 = x1._size[-2], x1._size[-1]
    r2, c2 = x2._size[-2], x2._size[-1]
    from .linalg import _broadcast_batch, _prod

    batch = _broadcast_batch(list(x1._size[:-2]), list(x2._size[:-2]))
    bp = _prod(batch)
    from .support.nn_util import contiguous

    e1 = call("view", contiguous(call("expand", x1, batch + [r1, c1])), [bp, r1, c1])
    e2 = call("view", contiguous(call("expand", x2, batch + [r2, c2])), [bp, r2, c2])
    out_shape = batch + [r1, r2]
    if r1 == 0 or r2 == 0 or bp == 0:
        return call("empty.memory_format", out_shape, dtype=x1._dtype, layout=None,
                    device=x1.device, pin_memory=None, memory_format=None)
    if c1 == 0:
        return call("zeros", out_shape, dtype=x1._dtype, layout=None, device=x1.device,
                    pin_memory=None)
    if _use_mm(p, mode, r1, r2):
        dist = call("_euclidean_dist", x1, x2) if bp == 1 else call("_euclidean_dist", e1, e2)
        return call("view", dist, out_shape)
    a = as_compute(e1, x1._dtype).astype(np.float64)[:, :, None, :]
    b = as_compute(e2, x1._dtype).astype(np.float64)[:, None, :, :]
    d = np.abs(a - b)
    if p == 0:
        res = np.count_nonzero(d, axis=-1).astype(np.float64)
    elif p == 1:
        res = d.sum(-1)
    elif p == 2:
        res = np.sqrt(np.square(d).sum(-1))
    elif np.isinf(p):
        res = d.max(-1)
    else:
        res = np.power(np.power(d, p).sum(-1), 1.0 / p)
    from ..core.cast import cast_array
    from ..core import dtypes as D

    return wrap(cast_array(res.reshape(out_shape), D.BY_NAME["float64"], x1._dtype), x1._dtype)


@kernel("_cdist_forward")
def _cdist_forward(x1, x2, p, compute_mode):
    _check_cdist(x1, x2)
    return _cdist_impl(x1, x2, p, compute_mode)


@kernel("cdist", composite=True)
def cdist(x1, x2, p=2.0, compute_mode=None):
    _check_cdist(x1, x2)
    r1, r2 = x1._size[-2], x2._size[-2]
    if x1.numel() == 0 or x2.numel() == 0:
        return call("_cdist_forward", x1, x2, p, compute_mode)
    mode = 0 if compute_mode is None else compute_mode
    if _use_mm(p, mode, r1, r2):
        return _cdist_impl(x1, x2, p, compute_mode)
    return call("_cdist_forward", x1, x2, p, compute_mode)
