"""Every nn module of upstream's own ModuleInfo database (torch.testing._internal.common_modules)
replayed on ours: upstream builds each module with the inputs its ``module_inputs_func`` makes and
records float32 outputs, parameter gradients and a float64 rerun (module_db_programs/generate.py);
ours rebuilds the same module from the same constructor arguments, state, inputs and seeds and is
judged with the harness's element-wise criterion, widened by how far upstream's own results move
under this machine's other CPU profiles (module_db_programs/replay.py).

The default run takes the first input of each module (train and eval where they differ); --slow
takes them all. A case that does not agree must be listed in KNOWN with the words of its first
problem; an entry that starts agreeing must leave the list.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from torchnative.testing import upstream

HERE = Path(__file__).parent / "module_db_programs"

# module name -> the words its failing cases report (refusals name the missing operator)
KNOWN: dict = {}
KNOWN_CASES = {
    # the fast path for a padding mask builds a nested tensor (torchnative has none)
    "nn.Transformer[25]eval": "aten::_nested_tensor_from_mask_left_aligned",
    "nn.Transformer[57]eval": "aten::_nested_tensor_from_mask_left_aligned",
}
# Cases that may differ on a CPU whose other profiles leave upstream's value where it is: a
# 4-element bias gradient 2 float32 ulp from upstream's, which upstream's float64 rerun matches
# exactly (so the derived tolerance is zero); where upstream moves across this machine's CPU
# profiles by as much (an AMD EPYC, AVX2), it agrees.
MAY_DIFFER = {"nn.TransformerEncoder[1]eval": "grad[3]: 1/4 elements off (max |diff| "}


def _module(case: str) -> str:
    return case.split("[")[0]


def _replay(tmp_path_factory, per_module: int, perturb=()):
    if not upstream.available():
        upstream.missing("the upstream environment (module database generation)")
    d = tmp_path_factory.mktemp("module_db")
    cases = d / "cases.pt"
    proc = upstream.run_script(HERE / "generate.py", str(cases), "--per-module", str(per_module))
    assert "0 skipped" in proc.stdout, proc.stdout  # every case reached ours
    # the same cases as upstream computes them under this machine's other CPU profiles: how far
    # upstream moves from itself widens the bar (compare.elementwise's ``others``)
    others = []
    for name, env in upstream.other_cpu_profiles().items():
        others.append(d / f"cases_{name}.pt")
        upstream.run_script(HERE / "generate.py", str(others[-1]), "--per-module",
                            str(per_module), env=env)
    ours = subprocess.run([sys.executable, str(HERE / "replay.py"), str(cases),
                           "--others", *map(str, others), "--perturb", *perturb],
                          capture_output=True, text=True, timeout=3000)
    assert ours.returncode == 0, ours.stderr[-3000:]
    return json.loads(ours.stdout.strip().splitlines()[-1])


def _expected(case: str, problem: str) -> bool:
    words = KNOWN_CASES.get(case) or MAY_DIFFER.get(case)
    if words:
        return words in problem
    return _module(case) in KNOWN and KNOWN[_module(case)] in problem


# All inputs (--slow), measured before the bar took upstream's moves across CPU profiles:
# 2,067 cases, 2,007 agree, 6 refuse (AdaptiveMaxPool3d's 4, which agree since it got a kernel,
# and the nested-tensor fast path in KNOWN_CASES); 54 are a few float32 ulp off in
# attention-based modules only (42 of them in one element; the largest 4.91e-06): the
# softmax-weighted sums' order differs from upstream's fused CPU attention. On an AMD EPYC
# (AVX2, 2026-12-07) 58 without the profiles' moves, 7 with them (replay.py's results over the
# cases of generate.py, without and with --others). They may not grow in number,
# size or family.
NUMERIC_FAMILIES = {"nn.Transformer", "nn.TransformerDecoderLayer", "nn.TransformerEncoder",
                    "nn.TransformerEncoderLayer", "nn.MultiheadAttention", "nn.LinearCrossEntropyLoss"}
NUMERIC_MAX_CASES, NUMERIC_MAX_DIFF = 54, 5e-6


def _numeric(case: str, problem: str) -> bool:
    m = re.search(r"elements off \(max \|diff\| ([0-9.e+-]+)", problem)
    return _module(case) in NUMERIC_FAMILIES and m is not None and float(m.group(1)) <= NUMERIC_MAX_DIFF


def _check(results: dict, all_inputs: bool = False):
    assert len(results) >= 100
    unexpected = {k: v for k, v in results.items() if v and not _expected(k, v)}
    if all_inputs:
        numeric = {k for k, v in unexpected.items() if _numeric(k, v)}
        assert len(numeric) <= NUMERIC_MAX_CASES
        unexpected = {k: v for k, v in unexpected.items() if k not in numeric}
    assert unexpected == {}
    failing = {k for k, v in results.items() if v}
    stale = {m for m in KNOWN if any(_module(k) == m for k in results)} - {_module(k) for k in failing}
    stale |= {k for k in KNOWN_CASES if k in results} - failing
    assert stale == set(), f"these agree now: remove them from KNOWN: {stale}"


@pytest.fixture(scope="module")
def first_inputs(tmp_path_factory):
    return _replay(tmp_path_factory, 1, perturb=("nn.Linear[0]eval",))


def test_module_db_first_inputs_agree(first_inputs):
    results = dict(first_inputs)
    assert results.pop("nn.Linear[0]eval")  # the control below
    _check(results | {"nn.Linear[0]eval": None})


def test_a_moved_output_element_is_caught(first_inputs):
    """Control: nn.Linear's first output element moved by a thousandth of itself is reported."""
    assert "output[0]" in first_inputs["nn.Linear[0]eval"]


@pytest.mark.slow
def test_module_db_all_inputs_agree(tmp_path_factory):
    _check(_replay(tmp_path_factory, 0), all_inputs=True)
