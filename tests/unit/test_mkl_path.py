"""The rule that says which of MKL's branches upstream's LAPACK takes (fused update or not);
the rule itself is checked against upstream in tests/differential/test_lu_factor_rounding.py."""

from __future__ import annotations

import pytest

from torchnative.csrc.platform.mkl_path import compute

AVX512 = frozenset({"avx2", "fma", "avx512f", "avx512vl", "avx512bw", "avx512dq"})
AVX2 = frozenset({"avx2", "fma"})
SSE = frozenset({"sse4_2", "avx"})


@pytest.mark.parametrize("cbwr,enable,vendor,flags,fused", [
    (None, None, "GenuineIntel", AVX512, True),       # measured: Intel Xeon, AVX-512
    (None, None, "AuthenticAMD", AVX512, False),      # measured: AMD EPYC, AVX-512
    ("AUTO", None, "GenuineIntel", AVX512, True),
    ("COMPATIBLE", None, "GenuineIntel", AVX512, False),
    ("SSE4_2", None, "GenuineIntel", AVX512, False),
    ("AVX", None, "GenuineIntel", AVX512, False),
    ("AVX2", None, "GenuineIntel", AVX512, True),
    ("avx512,strict", None, "GenuineIntel", AVX512, True),
    ("AVX2", None, "AuthenticAMD", AVX2, False),      # measured: AMD EPYC, AVX2 (no AVX-512)
    ("AVX512", None, "AuthenticAMD", AVX2, False),    # measured there too: no pin takes a
    ("AUTO", None, "AuthenticAMD", AVX2, False),      # fused branch on another vendor's CPU
    (None, "AVX2", "AuthenticAMD", AVX2, False),
    ("AVX2", None, "AuthenticAMD", AVX512, False),
    (None, "AVX", "GenuineIntel", AVX512, False),     # MKL_ENABLE_INSTRUCTIONS caps it
    ("AVX2", None, "GenuineIntel", SSE, False),       # no FMA instruction on the CPU
    ("bogus", None, "GenuineIntel", AVX512, True),    # an unknown value: the CPU decides
    (None, None, "", frozenset(), False),
])
def test_branch_rule(cbwr, enable, vendor, flags, fused):
    assert compute(cbwr, enable, vendor, flags) is fused
