"""numpy scalars as operator arguments, as upstream's PythonArgParser reads them: a numpy
integer is an int (``torch.full`` infers int64 from one), a numpy bool is a number read through
``__float__`` (so ``t * np.bool_(True)`` is a tensor of the default float dtype, not an array
numpy made), a complex64 is its real part, an integer past int64 is refused; ``double`` and
``int64_t`` parameters get Python numbers (a ``double`` takes any numpy number, a bool or a
complex one too, through ``__float__``); a ``dtype`` of ``torch.tensor`` may be a Python type
(``dtype=float``) and nothing else but a torch.dtype; an assignment ``t[i] = v`` takes a tensor
or a number that is a Python int, float or complex (numpy integers, float64 and complex128 are)
and refuses anything else naming the tensor's legacy type. Compared with upstream, value for
value and message for message."""

from __future__ import annotations

import json

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json, warnings
import numpy as np
import torch

warnings.simplefilter("ignore")
out = []


def show(r):
    if isinstance(r, torch.Tensor):
        return [str(r.dtype), list(r.shape), repr(r.tolist())]
    if isinstance(r, (tuple, list)):
        return [show(x) for x in r]
    return type(r).__name__ + ":" + repr(r)


t = torch.tensor([0.5, 2.0, -1.0])
ti = torch.tensor([1, 2, 3])
cases = {
    "full int": lambda: torch.full((2,), np.int64(5)),
    "full bool": lambda: torch.full((2,), np.bool_(True)),
    "full float32": lambda: torch.full((2,), np.float32(0.1)),
    "full uint64 past int64": lambda: torch.full((1,), np.uint64(2**63 + 5)),
    "add complex64": lambda: t + np.complex64(1 + 2j),
    "add complex128": lambda: t + np.complex128(1 + 2j),
    "add alpha int": lambda: ti.add(ti, alpha=np.int64(3)),
    "add alpha float32": lambda: t.add(t, alpha=np.float32(0.1)),
    "mul bool": lambda: ti * np.bool_(True),
    "mul bool false": lambda: t * np.bool_(False),
    "bool times": lambda: np.bool_(True) * ti,
    "int8 plus int64 scalar": lambda: torch.tensor([1], dtype=torch.int8) + np.int64(200),
    "float16 plus float16 scalar":
        lambda: torch.tensor([1.], dtype=torch.float16) + np.float16(0.1),
    "pow float32": lambda: ti ** np.float32(0.5),
    "rsub": lambda: np.float64(1.0) - t,
    "floordiv": lambda: ti // np.int32(2),
    "compare": lambda: t < np.float32(0.6),
    "arange ints": lambda: torch.arange(np.int64(2), np.int64(7), np.int64(2)),
    "arange float32": lambda: torch.arange(np.float32(0), np.float32(1), np.float32(0.25)),
    "linspace steps": lambda: torch.linspace(0, 1, np.int64(3)),
    "masked_fill": lambda: t.masked_fill(t > 0, np.float32(7.5)),
    "fill_ bool": lambda: ti.clone().fill_(np.bool_(True)),
    "mul_ float64 into int": lambda: ti.clone().mul_(np.float64(2.0)),
    "lerp weight": lambda: t.lerp(torch.zeros(3), np.float32(0.5)),
    "where": lambda: torch.where(t > 0, np.float32(1), np.int64(0)),
    "shift": lambda: ti << np.int64(2),
    "sum dim": lambda: t.sum(dim=np.int64(0)),
    "topk k": lambda: t.topk(np.int64(2)),
    "dropout p": lambda: torch.nn.functional.dropout(t, p=np.float32(0.0)),
    "dropout p bool": lambda: torch.nn.functional.dropout(t, np.bool_(False)),
    "dropout p complex64": lambda: torch.nn.functional.dropout(t, np.complex64(0.5 + 1j), False),
    "dropout p complex128": lambda: torch.nn.functional.dropout(t, np.complex128(0.5), False),
    "dropout p complex": lambda: torch.nn.functional.dropout(t, 0.5 + 0j, False),
    "logit eps bool": lambda: torch.logit(t, np.bool_(True)),
    "leaky_relu complex128": lambda: torch.nn.functional.leaky_relu(t, np.complex128(0.5 + 1j)),
    "argsort bool keyword": lambda: t.argsort(descending=np.bool_(True)),
    "tensor of long double": lambda: torch.tensor(np.longdouble(1.5)),
    "tensor of long double, float64": lambda: torch.tensor(np.longdouble(1.5), dtype=torch.float64),
    "tensor of datetime64": lambda: torch.tensor([np.datetime64(1, "D")]),
    "tensor of numpy str": lambda: torch.tensor(np.str_("a")),
    "tensor dtype float": lambda: torch.tensor([1], dtype=float),
    "tensor dtype complex": lambda: torch.tensor([1], dtype=complex),
    "tensor dtype numpy type": lambda: torch.tensor([1], dtype=np.int32),
    "tensor dtype str": lambda: torch.tensor([1], dtype="float32"),
    "as_tensor dtype bool": lambda: torch.as_tensor([1, 0], dtype=bool),
    "as_tensor dtype numpy type": lambda: torch.as_tensor([1], dtype=np.int32),
    "from_numpy of a numpy scalar": lambda: torch.from_numpy(np.float64(1.0)),
}
def assigned(value, index=slice(0, 2)):
    x = torch.zeros(4)
    x[index] = value
    return x


for i, value in enumerate([np.int32(3), np.uint64(5), np.float64(3.5), np.float32(2.5),
                           np.float16(1.5), np.bool_(True), np.complex64(1), [1., 2.],
                           np.array([1., 2.]), (1., 2.), None, "a", torch.tensor([7., 8.])]):
    for kind, index in (("slice", slice(0, 2)), ("indices", [0, 1])):
        cases[f"assign {i} by {kind}"] = lambda v=value, k=index: assigned(v, k)
for dt in (torch.float32, torch.complex64, torch.uint16, torch.uint64, torch.float8_e4m3fn,
           torch.bfloat16):
    cases[f"type of {dt}"] = lambda d=dt: torch.zeros(1, dtype=d).type()
cases["assign a list to an int tensor"] = lambda: torch.zeros(2, dtype=torch.int32).__setitem__(
    0, [1])
for name, f in cases.items():
    try:
        out.append([name, show(f())])
    except Exception as e:
        out.append([name, type(e).__name__, str(e)[:200]])
print(json.dumps(out))
'''


def test_numpy_scalar_arguments_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    # the cases that tell: upstream infers int64 from a numpy int, reads a numpy bool as a
    # float, and answers a tensor where numpy's own operator would have made an array
    assert ["full int", ["torch.int64", [2], "[5, 5]"]] in theirs
    assert ["mul bool", ["torch.float32", [3], "[1.0, 2.0, 3.0]"]] in theirs
    assert ours == theirs, json.dumps([(o, t) for o, t in zip(ours, theirs) if o != t])
