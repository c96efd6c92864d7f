"""torch._C's surface is honest: implemented, refusing by name, or absent, and counted."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import torch
from torchnative import census
from torchnative.csrc.core.refuse import TorchnativeNotImplementedError, refuses

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def result():
    return census.census()


def test_torch_c_is_ours():
    assert "/torchnative/_C/" in torch._C.__file__
    assert torch._C is sys.modules["torchnative._C"]
    assert sys.modules["torch._C._nn"] is torch._C._nn


def test_every_state_occurs_and_totals_are_large(result):
    t = census.totals(result)
    assert t["implemented"] > 1000 and t["refusing"] > 500 and t["absent"] > 100


def test_refusals_name_themselves(result):
    """Every refusing callable raises the one exception type, and its message names it."""
    checked = 0
    for mod, states in result.items():
        holder = census._resolve(torch._C, mod)
        for name, state in states.items():
            if state != "refusing":
                continue
            obj = getattr(holder, name)
            if not callable(obj) or isinstance(obj, type(sys)):
                continue
            with pytest.raises(TorchnativeNotImplementedError) as e:
                obj()
            assert name in str(e.value), (mod, name, str(e.value))
            assert isinstance(e.value, NotImplementedError)
            checked += 1
    assert checked > 500


def test_refusing_class_members_refuse():
    cls = torch._C.ScriptModule
    assert refuses(cls)
    with pytest.raises(TorchnativeNotImplementedError, match="ScriptModule"):
        cls()


def test_absent_names_are_not_attributes():
    for name in ("_cuda_getDeviceCount", "_rpc_init", "_dist_autograd_init",
                 "_cuda_setDevice", "_distributed_rpc", "_distributed_autograd"):
        assert not hasattr(torch._C, name), name


def test_distributed_available_without_the_backends_we_lack():
    import torch.distributed as dist

    assert dist.is_available() and dist.is_gloo_available()
    assert not (dist.is_nccl_available() or dist.is_mpi_available() or dist.is_ucc_available())
    assert not dist.rpc.is_available()
    for name in ("ProcessGroupNCCL", "ProcessGroupMPI", "ProcessGroupUCC", "ProcessGroupXCCL"):
        assert not hasattr(torch._C._distributed_c10d, name), name


def test_no_catch_all_getattr():
    assert not hasattr(torch._C, "definitely_not_a_torch_c_name")
    assert not hasattr(torch._C._nn, "definitely_not_a_torch_c_name")
    assert not hasattr(torch.ops.aten, "definitely_not_an_aten_op")


def test_build_flags_describe_torchnative():
    assert torch.cuda.is_available() is False
    assert torch._C._has_cuda is False and torch._C._has_mkldnn is False
    assert torch.backends.mkldnn.is_available() is False


def test_surface_page_is_current(result):
    page = (REPO / "docs/surface.md").read_text()
    assert page == census.markdown(result), \
        "docs/surface.md is stale: run .venv/bin/python -m torchnative.census --write docs/surface.md"


def test_foundation_imports_in_a_fresh_process():
    code = ("import torch, torch.nn, torch.nn.functional, torch.optim, torch.utils.data, torch.fx,"
            " torch.distributions, torch.utils.checkpoint, transformers\n"
            "from transformers import AutoModelForCausalLM, AutoTokenizer, BertModel, "
            "GPT2LMHeadModel, LlamaForCausalLM\n"
            "print(torch.__version__, transformers.__version__)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.startswith("2.13.0")
