"""Functions upstream binds with pybind11 refuse arguments none of their overloads accepts with
pybind11's TypeError: the overloads as pybind11 prints them and the call's arguments by repr
(``platform/pybind_errors.py``, one copy of the message for every such function of ours)."""

from __future__ import annotations

from torchnative.testing import upstream

PROGRAM = r"""
import io, json, re, torch


def refusal(fn):
    try:
        fn()
    except TypeError as e:
        return re.sub(r"0x[0-9a-f]+", "0x", str(e))  # an object's address differs per run
    except Exception as e:
        return [type(e).__name__, str(e)]
    return None


schema = torch._C.parse_schema("f(Tensor a) -> Tensor")
cases = {
    "Type.__eq__": lambda: torch._C.TensorType.get() == 3,
    "FunctionSchema.__eq__": lambda: schema == 3,
    "parse_schema": lambda: torch._C.parse_schema(3),
    "_unsafe_set_version_counter": lambda: torch._C._autograd._unsafe_set_version_counter(3, 4),
    "_jit_register_decomposition_for_schema":
        lambda: torch._C._jit_register_decomposition_for_schema(1, 2),
    "_get_fp32_precision_getter": lambda: torch._C._get_fp32_precision_getter("cuda", 1),
    "_set_fp32_precision_setter":
        lambda: torch._C._set_fp32_precision_setter("cuda", "all", None),
    "wait": lambda: torch._C.wait(3),
    "write_record":
        lambda: torch._C.PyTorchFileWriter(io.BytesIO()).write_record("x", 1.5, 3),
}
print(json.dumps({name: refusal(fn) for name, fn in cases.items()}))
"""


def test_pybind_refusals_as_upstream():
    ours, theirs = upstream.run_both(PROGRAM)
    assert ours == theirs
    # control: every case was refused with pybind11's message, not something else
    assert all(isinstance(m, str) and "incompatible function arguments" in m
               for m in ours.values())
