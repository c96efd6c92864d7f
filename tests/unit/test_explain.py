"""``python -m torchnative.explain``: one command shows an overload's schema, serving path with
``file:line``, gradient formula and agreement rows. Run once (a real process on our torch) over a
sample that covers every kind of path, and check each claim against the code it points at."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
SAMPLE = ["add.Tensor", "mul_.Scalar", "softmax.int", "addr", "mm",
          "_sparse_coo_tensor_with_dims", "aten::sum.dim_IntList"]


@pytest.fixture(scope="module")
def explained() -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    proc = subprocess.run([sys.executable, "-m", "torchnative.explain", *SAMPLE, "no_such_op"],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 2, proc.stderr[-2000:]  # the unknown name fails the command
    assert "error: no operator aten::no_such_op" in proc.stderr
    blocks = proc.stdout.strip().split("\n\n")
    return {b.splitlines()[0]: b for b in blocks}


def _code_at(ref: str) -> str:
    """The source line a ``path:line name`` reference points at."""
    path, line = re.match(r"(\S+):(\d+) ", ref + " ").groups()
    base = SRC if path.startswith("torchnative/") else _torch_root()
    return (base / path).read_text().splitlines()[int(line) - 1]


def _torch_root() -> Path:
    import importlib.util

    return Path(importlib.util.find_spec("torch").submodule_search_locations[0]).parent


def _serving(block: str, key: str) -> tuple[str, str]:
    lines = block.splitlines()
    i = next(i for i, s in enumerate(lines) if s.startswith(f"  {key}: "))
    code = lines[i + 1].strip() if lines[i + 1].startswith("    ") else ""
    return lines[i][len(f"  {key}: "):], code


def test_every_overload_of_the_sample_is_explained(explained):
    assert sorted(explained) == sorted("aten::" + n.removeprefix("aten::") for n in SAMPLE)


def test_schema_and_tags_come_from_native_functions(explained):
    block = explained["aten::add.Tensor"]
    assert "  schema: aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" \
        in block
    assert "  tags: core, pointwise, pt2_compliant_tag" in block
    assert "dispatch keys with a kernel in upstream's build: CPU, CUDA," in block


def test_kernel_path_points_at_the_kernel_definition(explained):
    path, code = _serving(explained["aten::add.Tensor"], "CPU")
    assert path == "kernel"
    assert code.startswith("torchnative/csrc/kernels/")
    assert _code_at(code).lstrip().startswith("def add(")


def test_structured_path_names_the_functional_kernel(explained):
    path, code = _serving(explained["aten::mul_.Scalar"], "CPU")
    assert path == "structured: inplace variant of mul.Scalar (kernel)"
    assert _code_at(code).lstrip().startswith("def mul(")


def test_composite_decomposition_and_refusal_paths(explained):
    path, code = _serving(explained["aten::softmax.int"], "CPU")
    assert path.startswith("composite")
    assert _code_at(code).lstrip().startswith("def ")
    path, code = _serving(explained["aten::addr"], "CPU")
    assert path == "upstream's Python decomposition"
    assert code.startswith("torch/_refs/") and _code_at(code).lstrip().startswith("def addr(")
    path, code = _serving(explained["aten::_sparse_coo_tensor_with_dims"], "CPU")
    assert path.startswith("refused") and code == ""


def test_gradient_shows_the_yaml_entry_the_translation_and_its_helpers(explained):
    block = explained["aten::mm"]
    assert "    - name: mm(Tensor self, Tensor mat2) -> Tensor" in block
    assert "      self: mm_mat1_backward(grad, mat2, self.sym_sizes()," in block
    assert "  node MmBackward0 (functional); translated formulas:" in block
    helper = re.search(r"mm_mat1_backward -> (\S+:\d+) ", block).group(1)
    assert _code_at(helper + " x").lstrip().startswith("def mm_mat1_backward(")
    assert "derivatives.yaml: no entry" in explained["aten::softmax.int"]


@pytest.mark.skipif(not (ROOT / "docs" / "agreement.md").exists(), reason="no reports")
def test_agreement_rows_are_the_reports_rows(explained):
    block = explained["aten::mm"]
    report = (ROOT / "docs" / "agreement.md").read_text().splitlines()
    rows = [s for s in report if s.startswith("| mm |")]
    assert rows and all("    " + r in block.splitlines() for r in rows)
    grads = [s for s in (ROOT / "docs" / "gradients.md").read_text().splitlines()
             if s.startswith("| mm |")]
    assert grads and all("    " + r in block.splitlines() for r in grads)
    # a row of another entry that merely reaches mm on its way is counted, not listed
    assert "| matmul |" not in block and "reached on the way by" in block


def test_an_operator_of_another_namespace_has_no_opinfo_rows():
    """OpInfo entries are torch's functions, which reach aten: prims::add is not the entry
    ``add`` (whose rows belong to aten::add)."""
    from torchnative import explain

    def counts(name):
        rows = explain.report_rows(explain.find_op(name), ROOT / "docs")
        return [int(r.split(":")[1].split()[0]) for r in rows if "rows of OpInfo" in r]

    assert counts("prims::add") == [0, 0]
    assert all(n > 0 for n in counts("add.Tensor"))  # control: aten's add has its rows
