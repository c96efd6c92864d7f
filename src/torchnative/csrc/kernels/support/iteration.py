"""TensorIterator's choice of dimension order, which decides the strides of the outputs it
allocates (upstream keeps its inputs' memory layout): one implementation for every kernel."""

from __future__ import annotations


def ti_perm(shape, operands, reduction: bool = False) -> list:
    """TensorIterator's dimension order (reorder_dimensions): perm[0] is the fastest dim.
    ``operands`` are the defined inputs' strides, already broadcast to ``shape`` (0 where an
    operand is broadcast); an output being allocated takes no part. With ``reduction``,
    ``operands[0]`` is a reduction's output (0 on reduced dims), whose reduced dims go first."""
    n = len(shape)
    perm = list(range(n - 1, -1, -1))

    def should_swap(d0, d1):
        for i, st in enumerate(operands):
            s0, s1 = st[d0], st[d1]
            if reduction and i == 0 and (s0 == 0) != (s1 == 0):
                return 1 if s1 == 0 else -1
            if s0 == 0 or s1 == 0:
                continue
            if s0 < s1:
                return -1
            if s0 > s1:
                return 1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def infer_dense_strides(size, stride) -> tuple:
    """TensorUtils.cpp infer_dense_strides: dense strides keeping the input's memory order."""
    nd = len(size)
    perm = ti_perm(size, [stride])  # the same ordering as TensorIterator's, with one operand
    out, cur = [0] * nd, 1
    for idx in perm:
        out[idx] = cur
        if size[idx] > 1:
            cur *= size[idx]
    return tuple(out)
