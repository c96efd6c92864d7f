"""torch.tensor from Python numbers: the inferred dtype, the values and the errors as upstream's
(tensor_new.cpp's inference, then store_scalar per value: an integer dtype takes a float or an
int checked against its range, uint64 only ints, bool any number's truth). Scalars, flat and
nested lists, every dtype family; compared with upstream, value for value and message for
message."""

from __future__ import annotations

import json

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = r'''
import json, torch
cases = [1., 0., -0., 2.75, -2.75, 1e300, -1e300, float('nan'), float('inf'), 1e-320, 3, -7, -1,
         -256, 300, True, False, 2**62, 2**63 - 1, [1., 2.], [1, 2], [1, 2.5], [True, False],
         (1., 3), [0.1, 0.2, 0.3], [2**63], [2**64 + 1, 1.0], [1.0, 2**64 + 1], [-0.5, 2**64],
         [1e300, 2**70], [-0.0, 5], [1, True], [], [[1., 2.], [3, 4]], [[1, 2], [3]], [1 + 2j, 3],
         [[True], [False]], [4294967295, -1], [65535.9]]
dtypes = [None, torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64,
          torch.int32, torch.int16, torch.int8, torch.uint8, torch.uint16, torch.uint32,
          torch.uint64, torch.bool, torch.complex64]
out = []
for c in cases:
    for dt in dtypes:
        try:
            t = torch.tensor(c, dtype=dt)
            vals = t.to(torch.complex128 if t.is_complex() else torch.float64).flatten().tolist() \
                if t.dtype in (torch.bfloat16, torch.float16, torch.uint16, torch.uint32) \
                else t.flatten().tolist()
            out.append([repr(c), str(dt), str(t.dtype), list(t.shape), repr(vals), t.stride()])
        except Exception as e:
            out.append([repr(c), str(dt), type(e).__name__, str(e)])
torch.set_default_dtype(torch.float64)
out.append([str(torch.tensor(0.1).dtype), str(torch.tensor([1, 0.1]).dtype),
            torch.tensor(0.1).item(), torch.tensor([0.1, 2]).tolist()])
import numpy as np
arrays = [np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(6.0).reshape(3, 2).T,
          np.array([1, -2, 3], np.int32), np.array([True, False]), np.array([1.5, 2], np.float16),
          np.arange(4, dtype=">f4"), np.zeros((0, 3), np.float32),
          np.arange(10, dtype=np.uint8)[::3],
          np.float32(1.25), np.float64(-0.5), np.int16(7), np.bool_(True), np.array(2.5),
          np.array([1 + 2j], np.complex64)]
for a in arrays:
    for dt in (None, torch.float64, torch.int32):
        try:
            t = torch.tensor(a, dtype=dt)
            out.append([repr(a), str(dt), str(t.dtype), list(t.shape), repr(t.to(
                torch.complex128 if t.is_complex() else torch.float64).flatten().tolist()),
                t.stride(), t.is_contiguous()])
        except Exception as e:
            out.append([repr(a), str(dt), type(e).__name__, str(e)])
for a in (np.array([1.0], dtype=object), np.array(['a']), np.array([b'a']),
          np.array([1], dtype=np.longdouble), np.array(['2020-01-01'], dtype='datetime64[D]'),
          np.zeros(2, dtype=[('a', 'f4')]), np.arange(4, dtype='>i4')):
    for make in (torch.tensor, torch.from_numpy):   # refused by name, as upstream refuses
        try:
            out.append(str(make(a)))
        except Exception as e:
            out.append([repr(a), type(e).__name__, str(e)])
a = np.arange(3.0)
t = torch.tensor(a)
a[0] = 9.0                                       # torch.tensor copies
out.append(t.tolist())
for data, dt in (([1, [2]], torch.uint64), ([1, [2]], torch.bool), ([np.float32(1)], torch.uint64),
                 ([np.int64(1)], torch.uint64), ([True], torch.uint64), ([-1, 1.5], torch.uint64),
                 ([1.5, -1], torch.uint64), ([np.float64(2.5)], torch.int32),
                 ([np.float32(1)], torch.bool), ([1 + 2j, 3], torch.bool)):
    try:
        out.append(str(torch.tensor(data, dtype=dt)))
    except Exception as e:
        out.append([repr(data), str(dt), type(e).__name__, str(e)])
# numpy scalars as values: each unpacked as a Python int (``__index__``) or, a float64, as a
# double, then checked against the dtype's range in element order, as Python numbers are
numpy_values = [np.int64(300), np.int64(-1), np.int8(-128), np.int16(-300), np.uint8(200),
                np.uint32(4000000000), np.uint64(2**63), np.float64(-1.0), np.float64(255.9),
                np.float64('nan'), np.float64(1e10), np.int64(-2**63), [np.int64(5), 2.5],
                [np.int64(300), np.float32(2.5)], [[np.int32(5), 7], [8, np.int64(1 << 40)]],
                [np.int64(7), np.uint32(4000000000)], [[np.int64(300)], [1, 2]],
                [np.uint8(3), True], [np.float16(0.1), np.int32(2)], np.True_, [np.True_, 5],
                [np.True_, False], np.complex64(1), [np.uint64(3)]]
for data in numpy_values:
    for dt in (None, torch.int8, torch.uint8, torch.int32, torch.uint32, torch.int64,
               torch.float32, torch.float16, torch.bool):
        try:
            t = torch.tensor(data, dtype=dt)
            out.append([repr(data), str(dt), str(t.dtype), repr(t.to(torch.float64).tolist())])
        except Exception as e:
            out.append([repr(data), str(dt), type(e).__name__, str(e)])
# tensors within the nesting are values, not sequences: each read as store_scalar reads it
# (one element through __float__, __complex__ or __index__); a tensor where a sequence is
# expected is iterated; a 0-d array has no length
import warnings
warnings.simplefilter("ignore")
T = torch.tensor
nested = [([T([1.])], None), ([T([1., 2.])], None), ([T([1., 2.]), T([3., 4.])], None),
          ([T(1.), T(2.)], None), ([[T(1.)]], None), ([T([[1.]])], None), ((T([5]),), None),
          ([T([1]), 2], None), ([np.array(3.)], None), ([torch.ones(2, 2)], None),
          ([[1, 2], T([3, 4])], None), ([[1, 2], T(3)], None), ([T(1.5), T(2)], torch.int64),
          ([T(3), T(2)], torch.int8), ([T(300)], torch.int8), ([T(1.5)], torch.bool),
          ([T(True), T(0)], torch.bool), ([T(5)], torch.uint64), ([T(2.5)], torch.bfloat16),
          ([T(1 + 2j)], torch.float32), ([T([])], None), ([[T(1.)], [2.]], None),
          ([T(1), np.int64(2), 3.5], None), ([T(1, dtype=torch.uint8), T(-1, dtype=torch.int8)],
                                             None), ([T(7)], torch.complex64)]
for data, dt in nested:
    try:
        t = torch.tensor(data, dtype=dt)
        out.append([repr(data), str(dt), str(t.dtype), list(t.shape),
                    repr(t.to(torch.complex128 if t.is_complex() else torch.float64).tolist())])
    except Exception as e:
        out.append([repr(data), str(dt), type(e).__name__, str(e)])
# arrays within the nesting are sequences too: their lengths checked axis by axis in the walk's
# order, their elements numpy scalars read one by one (a float32 is no integer; a value past
# the dtype's range is refused)
A = np.array
in_lists = [[A([1, 2]), A([1, 2, 3])], [A([[1, 2]]), A([1, 2])], [A([1, 2]), A([[1, 2], [3, 4]])],
            [[1, 2], A([[1, 2], [3, 4]])], [A([1, 2]), [3, 4]], [A([1.5, 2.5], np.float32)],
            [A([1, 2], np.uint8), A([300, 1])], [A([1, 2]), A([1, -2])], [A([1, 2]), A([np.nan, 2])],
            [A([True, False])], [A([1 + 1j, 2])], [A([2**40, 2])], [[1.5, 2], A([1, 2**40])],
            [A([], np.float32)], [A([1.5], np.float16)], [A([1], np.uint64)], [1.0, A(2.0)],
            [1, A(2.5)], [A([2**63 + 1], np.uint64)], [A([1, 2]), A([3, 4])], [[A([1, 2])]]]
for data in in_lists:
    for dt in (None, torch.int64, torch.uint8, torch.int32, torch.bool, torch.float32,
               torch.uint64, torch.complex64):
        try:
            t = torch.tensor(data, dtype=dt)
            out.append([repr(data), str(dt), str(t.dtype), list(t.shape),
                        repr(t.to(torch.complex128 if t.is_complex() else torch.float64).tolist())])
        except Exception as e:
            out.append([repr(data), str(dt), type(e).__name__, str(e)])
# any sequence nests (PySequence_Check: a range, bytes, a deque, a user's class with
# __getitem__), its items read by index for the dtype and by iteration for the values; an object
# that is no number is read through what the dtype's conversion reads (__float__, __index__,
# __complex__) or refused by it
import array
import collections


class Seq:
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i >= self.n:
            raise IndexError
        return i * 1.5


class NoLen:
    def __getitem__(self, i):
        return 1


class Flt:
    def __float__(self):
        return 2.5


class Idx:
    def __index__(self):
        return 3


class Cpx:
    def __complex__(self):
        return 1 + 2j


objects = [(range(3), None), ([range(2), range(2)], None), (range(3), torch.float32),
           (collections.deque([1, 2]), None), (array.array("f", [1.5, 2]), None),
           (bytearray(b"ab"), None), (Seq(3), None), ([Seq(2), Seq(2)], None), (NoLen(), None),
           ([1, range(2)], None), ([1, range(2)], torch.int64), (None, torch.float32),
           ({1, 2}, torch.float32), ([None], None), ([1, None], torch.float32), (range(0), None),
           ([range(2), [1]], None), (b"", None), ([b"a"], None), ([b"a"], torch.int64),
           (memoryview(b"ab"), None), ((i for i in range(3)), None), ({1: 2}, None),
           (Flt(), torch.float32), (Idx(), torch.float32), (Idx(), torch.int64),
           (Flt(), torch.int64), (Cpx(), torch.complex64), (Flt(), torch.complex64),
           ([Flt()], torch.float64), (Flt(), None), (object(), torch.bool), (Idx(), torch.bool),
           (None, torch.uint64), (Idx(), torch.uint64), (["a"], torch.float32), ([[1], "ab"], None)]
for data, dt in objects:
    try:
        t = torch.tensor(data, dtype=dt)
        out.append([type(data).__name__, str(dt), str(t.dtype), list(t.shape),
                    repr(t.to(torch.complex128 if t.is_complex() else torch.float64).tolist())])
    except Exception as e:
        out.append([type(data).__name__, str(dt), type(e).__name__, str(e)])
# the reads of tensors within the data are not dispatched where a mode could see them
# (upstream stores with the Python key excluded): a mode sees the result lifted, nothing else
zero_d = [T(1.5), T(2), T(True), T(3.25, dtype=torch.float64), T(1.5, dtype=torch.bfloat16)]
for dt in (None, torch.float32, torch.complex64, torch.int64):
    try:
        with tracing() as seen:
            t = torch.tensor(zero_d, dtype=dt)
        out.append([str(dt), str(t.dtype), repr(t.tolist()), sorted(set(seen))])
    except Exception as e:
        out.append([str(dt), type(e).__name__, str(e)])
for bad in ([[1, 2], [3]], [[1, 2], 3], [1, [2]], [[[1.0]], [[2.0], [3.0]]], [["a"]]):
    try:
        out.append(str(torch.tensor(bad)))
    except Exception as e:
        out.append([repr(bad), type(e).__name__, str(e)])
print(json.dumps(out))
'''


def test_tensor_from_python_numbers_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = sides.on_both(PROGRAM)
    # the program's own cases on upstream: a float past int32 is refused by name, uint64 takes
    # no float, bool takes an int past int64
    assert ["1e+300", "torch.int32", "RuntimeError",
            "value cannot be converted to type int32 without overflow"] in theirs
    assert ["[1.0, 2.0]", "torch.uint64", "TypeError", "an integer is required"] in theirs
    assert any(r[:3] == ["[9223372036854775808]", "torch.bool", "torch.bool"] for r in theirs)
    # a numpy int past an integer dtype's range is refused, not wrapped; a list of tensors of
    # several elements is refused, not stacked
    assert ["[tensor([1., 2.]), tensor([3., 4.])]", "None", "ValueError",
            "only one element tensors can be converted to Python scalars"] in theirs
    assert ["np.int64(300)", "torch.int8", "RuntimeError",
            "value cannot be converted to type int8 without overflow"] in theirs
    assert ours == theirs, json.dumps([(o, t) for o, t in zip(ours, theirs) if o != t])
