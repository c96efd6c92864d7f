"""``@torch.jit.script`` functions on our torch, compared with upstream in separate processes.

``tests/differential/jit_script_program.py`` holds scripted helpers in the style of the test-time adaptation
literature and the cases; it runs once on each torch. Numbers agree at a tolerance derived from
upstream's own float32-vs-float64 error; errors (argument checks, unsupported syntax) agree in
type and text; what needs TorchScript IR refuses by name on ours.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp

PROGRAM = Path(__file__).with_name("jit_script_program.py")

# where upstream's text comes from something we do not build: the return type TorchScript infers
# from IR for an unannotated function
KNOWN_TEXT_DIFFERENCES = {"inferred_tensor_given_int"}
# errors raised inside a scripted function: the interpreter's traceback marks the failing range in
# the source; ours is Python's position of the failing instruction, the same place, whose width can
# differ by a few characters (upstream's ranges end where their last subtree's range ends)
TRACEBACK_CASES = {"runtime_error_inside", "raise_inside", "assert_inside",
                   "raise_in_python_callee", "error_in_scripted_callee"}


@pytest.fixture(scope="module")
def results():
    if not upstream.available():
        upstream.missing("upstream torch for the TorchScript comparison")
    ours = subprocess.run([upstream.ours_python(), str(PROGRAM)], capture_output=True, text=True,
                          timeout=600)
    assert ours.returncode == 0, ours.stderr[-3000:]
    theirs = upstream.run_script(PROGRAM, timeout=600)
    return json.loads(ours.stdout.splitlines()[-1]), json.loads(theirs.stdout.splitlines()[-1])


# gradients are sums whose terms cancel: upstream's largest error on the output bounds each element
SUMMED = {"entropy_grad"}


def _verdict(theirs, case, mine):
    """None when ``mine`` agrees with upstream's float32 result (the golden harness's element-wise
    criterion against upstream's float32 and float64 runs), else why not."""
    low, high = (np.asarray(theirs[k][case], dtype=np.float64) for k in ("float32", "float64"))
    return cmp.elementwise(np.asarray(mine, dtype=np.float64), low, high, "float32",
                           summed=case in SUMMED)


def test_numeric_cases_agree(results):
    ours, theirs = results
    assert set(ours["float32"]) == set(theirs["float32"])
    for case in theirs["float32"]:
        assert _verdict(theirs, case, ours["float32"][case]) is None, case


def test_comparison_catches_wrong_helpers(results):
    """Controls: a flipped sign, a missing factor and one element off by a few tolerances fail."""
    _, theirs = results
    for case in ("softmax_entropy", "symmetric_entropy", "eata_weights", "entropy_grad"):
        up = np.asarray(theirs["float32"][case], dtype=np.float64)
        hi = np.asarray(theirs["float64"][case], dtype=np.float64)
        last = up.copy().ravel()
        last[-1] += 8 * np.abs(up - hi).max() + 1e-4 * max(abs(last[-1]), 1e-3)
        for wrong in (-up, 0.5 * up, last.reshape(up.shape)):
            assert _verdict(theirs, case, wrong) is not None, case


def test_error_cases_agree(results):
    ours, theirs = results
    assert set(ours["errors"]) == set(theirs["errors"])
    for case, up in theirs["errors"].items():
        mine = ours["errors"][case]
        assert up["type"] is not None, case  # every case is an error upstream
        if case in KNOWN_TEXT_DIFFERENCES:
            assert mine["type"] == up["type"], case
            continue
        if case in TRACEBACK_CASES:
            assert up["message"].startswith("The following operation failed in the TorchScript")
            up, mine = ({"type": r["type"], "message": re.sub("~+", "~", r["message"])}
                        for r in (up, mine))
        assert mine == up, case


def test_known_text_differences_are_what_they_say(results):
    ours, theirs = results
    up, mine = (r["errors"]["inferred_tensor_given_int"]["message"] for r in (theirs, ours))
    head = up.split("-> Tensor")[0]
    assert mine.startswith(head + "-> <return type TorchScript would infer")
    assert mine.endswith(up.split("\n")[-1])
    kinds = {case: ours["errors"][case]["type"] for case in TRACEBACK_CASES}
    assert kinds["raise_inside"] == kinds["assert_inside"] == "torch.jit.Error"
    assert kinds["runtime_error_inside"] == "builtins.RuntimeError"


def test_unsupported_syntax_raises_upstreams_frontend_errors(results):
    ours, _ = results
    kinds = {case: r["type"] for case, r in ours["errors"].items() if case.startswith("script_")}
    assert kinds["script_uses_lambda"] == "torch.jit.frontend.UnsupportedNodeError"
    assert kinds["script_uses_varargs"] == "torch.jit.frontend.NotSupportedError"
    assert kinds["script_bad_default"] == "builtins.RuntimeError"
    assert "<--- HERE" in ours["errors"]["script_uses_lambda"]["message"]


# a Dict parameter given None fails in pybind's own argument matching upstream (a TypeError);
# None for a Tensor parameter is an undefined tensor upstream, which ours refuses by name
CONVERSION_DIFFERENCES = {"takes_dict(None)", "takes_tensor(None)"}


def test_argument_conversions_agree(results):
    """12 parameter types x 17 kinds of value: the value that arrives, or the same error. Where
    upstream's text carries pybind's traceback of a Python error ("At:"), the text before it."""
    ours, theirs = results
    assert set(ours["conversions"]) == set(theirs["conversions"])
    assert len(theirs["conversions"]) == 12 * 17
    for case, up in theirs["conversions"].items():
        mine = ours["conversions"][case]
        if case == "takes_tensor(None)":
            assert up == {"type": "int", "value": "0"}
            assert mine["error"] == "TorchnativeNotImplementedError", mine
            continue
        if case in CONVERSION_DIFFERENCES:
            assert "error" in up and "error" in mine, case
            continue
        if "\n\nAt:\n" in up.get("message", ""):
            up = dict(up, message=up["message"].split("\n\nAt:\n")[0])
        assert mine == up, case


def test_names_schemas_and_values_agree(results):
    ours, theirs = results
    assert ours["describe"] == theirs["describe"]
    assert theirs["describe"]["sar_ema_types"] == ["float", "float", "float"]


@torch.jit.script
def _scripted(x: torch.Tensor, t: float = 2.0) -> torch.Tensor:
    return (x / t).softmax(0)


@torch.jit.script
def _unannotated_return(x):
    return x


@pytest.mark.parametrize("what", ["inlined_graph", "code"])
def test_ir_properties_refuse_by_name(what):
    with pytest.raises(NotImplementedError, match=f"ScriptFunction.{what}.*no TorchScript IR"):
        getattr(_scripted, what)


def test_ir_users_refuse_by_name(tmp_path):
    with pytest.raises(NotImplementedError, match="ScriptFunction.save"):
        _scripted.save(str(tmp_path / "f.pt"))
    with pytest.raises(NotImplementedError, match="ScriptFunction.save_to_buffer"):
        _scripted.save_to_buffer()
    with pytest.raises(NotImplementedError, match="schema of a function without a return annotation"):
        _unannotated_return.schema
    with pytest.raises(NotImplementedError, match=r"torch\._C\.Graph\.nodes.*no TorchScript IR"):
        _scripted.graph.nodes()  # the graph stands for the function (test_jit_compilation_unit.py)
    with pytest.raises(NotImplementedError, match="ConcreteModuleTypeBuilder: torch.jit.script of an nn.Module"):
        torch.jit.script(torch.nn.Linear(2, 2))
    with pytest.raises(NotImplementedError, match="_create_function_from_trace: torch.jit.trace records"):
        torch.jit.trace(lambda x: x + 1, (torch.ones(2),))


def test_scripted_function_runs_in_process():
    x = torch.tensor([1.0, 2.0, 3.0])
    assert torch.equal(_scripted(x), (x / 2).softmax(0))
    assert torch.equal(_scripted(x, 1), x.softmax(0))
    assert str(_scripted.schema) == "_scripted(Tensor x, float t=2.) -> Tensor"
    assert _scripted.qualified_name == "__torch__.test_jit_script._scripted"


def test_compile_without_the_original_function_refuses():
    """A ScriptFunction made by _jit_script_compile alone has no Python body to run."""
    from torch.jit.frontend import get_jit_def
    from torch._jit_internal import createResolutionCallbackFromClosure

    def g(x: torch.Tensor) -> torch.Tensor:
        return x

    fn = torch._C._jit_script_compile("__torch__.g", get_jit_def(g, "g"),
                                      createResolutionCallbackFromClosure(g), {})
    assert str(fn.schema) == "g(Tensor x) -> Tensor"
    with pytest.raises(NotImplementedError, match="made outside torch.jit.script"):
        fn(torch.ones(1))


def test_unchecked_parameter_types_refuse_at_script_time():
    from typing import Union

    def h(x: Union[int, float]) -> float:
        return float(x)

    with pytest.raises(NotImplementedError, match=r"argument of TorchScript type Union\[float, int\]"):
        torch.jit.script(h)


def test_is_scripting_inside_a_scripted_function_refuses():
    """Compiled TorchScript takes the is_scripting() branch; running as Python would silently take
    the other one."""

    def branchy(x: torch.Tensor) -> torch.Tensor:
        if torch.jit.is_scripting():
            return x
        return x * 2

    with pytest.raises(NotImplementedError, match=r"torch.jit.is_scripting\(\) in scripted function"):
        torch.jit.script(branchy)


def test_fork_of_a_value_torchscript_cannot_type_raises():
    class Opaque:
        pass

    with pytest.raises(RuntimeError, match="(?s)Tracer cannot infer type of .*value of type Opaque"):
        torch.jit.fork(Opaque)


@torch.jit.script
def _calls_a_refusal(x: torch.Tensor) -> torch.Tensor:
    return torch.jit.trace(torch.neg, (x,))(x)


def test_a_refusal_inside_a_scripted_function_stays_a_refusal():
    """Ours only: what torchnative refuses is not dressed up as a TorchScript interpreter error."""
    with pytest.raises(NotImplementedError, match="_create_function_from_trace") as info:
        _calls_a_refusal(torch.ones(2))
    assert "TorchScript interpreter" not in str(info.value)


def test_tensor_parameter_defaulting_to_none_refuses():
    """Upstream's default is an undefined tensor (``x is None`` is False in its code)."""

    def f(x: torch.Tensor = None) -> bool:
        return x is None

    with pytest.raises(NotImplementedError, match="None for a .non-Optional. Tensor parameter"):
        torch.jit.script(f)
