"""torch.cpu.get_capabilities() and the quantized engines, as this build answers them."""
from __future__ import annotations

import platform

import pytest

from torchnative.testing.upstream import run_json, run_json_ours

CAPS = "import json, torch\nprint(json.dumps(dict(torch.cpu.get_capabilities())))"

x86 = pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                         reason="the description is read on x86-64 only")


@x86
def test_cpu_capabilities_describe_this_machine_as_upstream_does():
    ours, theirs = run_json_ours(CAPS), run_json(CAPS)
    assert sorted(ours) == sorted(theirs)
    # cpuinfo shortens the model name with vendor-specific rules of which ours is a subset
    ours.pop("cpu_name"), theirs.pop("cpu_name")
    differ = {k: (ours[k], theirs[k]) for k in theirs if ours[k] != theirs[k]}
    assert not differ, differ


@x86
def test_the_flags_are_read_from_the_cpu(monkeypatch):
    # control: each key follows the flag the kernel reports, not a filled-in answer
    from torchnative.csrc.platform import cpu_capability
    from torchnative.csrc.surface import cpu_features

    monkeypatch.setattr(cpu_capability, "FLAGS", frozenset({"avx2", "pni", "sha_ni"}))
    caps = cpu_features.get_cpu_capability()
    on = {k for k, v in caps.items() if v is True}
    assert on == {"avx2", "sse3", "sha"}, on


@x86
def test_leaf_7_1_bits_are_read_from_the_c_librarys_cpuid_words(monkeypatch):
    # control: AVX10 (EDX bit 19) counts only with the AVX-512 registers saved, and without the
    # C library's word the flag names stand in
    from torchnative.csrc.platform import cpu_capability, cpuid_leaves
    from torchnative.csrc.surface import cpu_features

    words = {}
    monkeypatch.setattr(cpuid_leaves, "word", lambda index, reg: words.get((index, reg)))
    monkeypatch.setattr(cpu_capability, "FLAGS", frozenset({"avx", "avx512f", "avx_vnni_int8"}))
    edx = (cpuid_leaves.CPUID_INDEX_7_ECX_1, cpuid_leaves.EDX)

    def on():
        caps = cpu_features.get_cpu_capability()
        return {k for k in cpu_features._LEAF_7_1 if caps[k]}

    assert on() == {"avx_vnni_int8"}
    words[edx] = 1 << 19 | 1 << 5
    assert on() == {"avx10_1", "avx_ne_convert"}
    monkeypatch.setattr(cpu_capability, "FLAGS", frozenset({"avx"}))
    assert on() == {"avx_ne_convert"}


QENGINES = '''
import json, torch
import torch.backends.quantized as q
out = {"supported": q.supported_engines, "engine": q.engine}
try:
    q.engine = "fbgemm"
except RuntimeError as e:
    out["set"] = str(e)
print(json.dumps(out))
'''


def test_no_quantized_engine_is_claimed():
    assert run_json_ours(QENGINES) == {"supported": [], "engine": "none",
                                       "set": "quantized engine FBGEMM is not supported"}
