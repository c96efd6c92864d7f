"""Broadcasting two or more shapes, as at::infer_size does it.

The one copy of the rule: sizes are matched from the right, and a mismatch names the output
dimension where it was found (the rightmost one), so the message is upstream's word for word.
"""
from __future__ import annotations


def infer_size(a, b) -> tuple:
    """at::infer_size: the broadcast of shapes ``a`` and ``b``."""
    n = max(len(a), len(b))
    out = [1] * n
    for i in range(n - 1, -1, -1):
        da, db = len(a) - n + i, len(b) - n + i
        sa = a[da] if da >= 0 else 1
        sb = b[db] if db >= 0 else 1
        if sa != sb and sa != 1 and sb != 1:
            raise RuntimeError(f"The size of tensor a ({sa}) must match the size of tensor b "
                               f"({sb}) at non-singleton dimension {i}")
        out[i] = sb if sa == 1 else sa
    return tuple(out)


def broadcast_shape(*shapes) -> tuple:
    """TensorIterator's and expand_outplace's shape: infer_size folded from the left."""
    out: tuple = ()
    for shape in shapes:
        out = infer_size(out, tuple(shape))
    return out
