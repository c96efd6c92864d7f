"""The inputs of collectives.py, shared with the test that checks its results."""

import numpy as np

DTYPES = (np.float32, np.float64, np.int64, np.int32, np.uint8, np.int8, np.float16)
OPS = ("SUM", "PRODUCT", "MIN", "MAX", "BAND", "BOR", "BXOR", "AVG")


def data(salt, shape, dtype, rank):
    g = np.random.default_rng(1000 * salt + rank)
    if dtype in (np.float32, np.float64, np.float16):
        return g.standard_normal(shape).astype(dtype)
    if dtype == np.bool_:
        return g.integers(0, 2, shape).astype(bool)
    info = np.iinfo(dtype)
    lo, hi = max(info.min, -50), min(info.max, 50)
    return g.integers(lo, hi, shape, endpoint=True).astype(dtype)


def all_reduce_cases():
    """(key, salt, shape, dtype, op) of the all_reduce sweep, in the program's order."""
    salt, out = 0, []
    for dtype in DTYPES:
        for op in OPS:
            salt += 1
            out.append((f"all_reduce.{np.dtype(dtype).name}.{op}", salt, (7, 5), dtype, op))
    for dtype in (np.float32, np.int64):
        salt += 1
        out.append((f"all_reduce.large.{np.dtype(dtype).name}", salt, (300_001,), dtype, "SUM"))
    return out
