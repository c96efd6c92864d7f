"""numpy's OpenBLAS kernel set: the rule (platform/blas_kernels.py), its switch with a stand-in
library, and, in fresh processes, what importing our torch does to the real library on this
machine (whatever its CPU: where no rule applies, nothing may change)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from torchnative.csrc.platform import blas_kernels as bk

ZEN4 = {"vendor_id": "AuthenticAMD", "cpu family": "25"}


def _cpu(monkeypatch, info):
    monkeypatch.setattr(bk, "cpuinfo", lambda *keys: info.get(keys[0]))


class _Lib:
    """A DYNAMIC_ARCH OpenBLAS: its initializer takes OPENBLAS_CORETYPE if it knows the set."""

    def __init__(self, current, known=("Haswell", "SkylakeX")):
        self.current, self.known, self.calls = current, known, []

    def gotoblas_dynamic_quit(self):
        self.calls.append("quit")

    def gotoblas_dynamic_init(self):
        want = os.environ.get("OPENBLAS_CORETYPE")
        self.calls.append(("init", want))
        if want in self.known:
            self.current = want

    def corename(self):
        return self.current.encode()


def _library(monkeypatch, lib):
    monkeypatch.setattr(bk, "_openblas", lambda: (lib, lib.corename))


@pytest.mark.parametrize("info, current, expected", [
    (ZEN4, "SkylakeX", "Haswell"),
    (ZEN4, "Haswell", None),                                        # Zen 3: already Haswell
    ({"vendor_id": "GenuineIntel", "cpu family": "6"}, "SkylakeX", None),
    ({"vendor_id": "AuthenticAMD", "cpu family": "26"}, "SkylakeX", None),  # Zen 5: not measured
    (ZEN4, None, None),                                             # another BLAS library
])
def test_the_rule(monkeypatch, info, current, expected):
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    _cpu(monkeypatch, info)
    assert bk._wanted(current) == expected


def test_the_users_coretype_decides(monkeypatch):
    _cpu(monkeypatch, ZEN4)
    monkeypatch.setenv("OPENBLAS_CORETYPE", "SkylakeX")
    lib = _Lib("SkylakeX")
    _library(monkeypatch, lib)
    assert bk.choose() is None and lib.calls == [] and lib.current == "SkylakeX"


def test_the_switch_and_the_environment(monkeypatch):
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    _cpu(monkeypatch, ZEN4)
    lib = _Lib("SkylakeX")
    _library(monkeypatch, lib)
    assert bk.choose() == "Haswell"
    assert lib.current == "Haswell" and lib.calls == ["quit", ("init", "Haswell")]
    assert "OPENBLAS_CORETYPE" not in os.environ


def test_a_set_the_library_lacks_is_switched_back(monkeypatch):
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    _cpu(monkeypatch, ZEN4)

    class Falls(_Lib):  # a build without the Haswell set falls back to its oldest one
        def gotoblas_dynamic_init(self):
            super().gotoblas_dynamic_init()
            if self.calls[-1] == ("init", "Haswell"):
                self.current = "Prescott"

    lib = Falls("SkylakeX")
    _library(monkeypatch, lib)
    assert bk.choose() is None
    assert lib.current == "SkylakeX" and lib.calls[-1] == ("init", "SkylakeX")
    assert "OPENBLAS_CORETYPE" not in os.environ


def test_a_library_without_the_switch_is_left_alone(monkeypatch):
    monkeypatch.delenv("OPENBLAS_CORETYPE", raising=False)
    _cpu(monkeypatch, ZEN4)

    class Static:  # a build for one CPU: no dynamic initializer
        current = "SkylakeX"

        def corename(self):
            return b"SkylakeX"

    _library(monkeypatch, Static())
    assert bk.choose() is None


def _in_fresh_process(code, **env):
    environ = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    environ.update(env)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=environ, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


_NATIVE = "import numpy\nfrom torchnative.csrc.platform import blas_kernels as b\nprint(b.kernel_set())"
_AFTER_TORCH = ("import os, numpy\nimport torch\nfrom torchnative.csrc.platform import blas_kernels as b\n"
                "from threadpoolctl import threadpool_info\n"
                "print(b.kernel_set(), [i['architecture'] for i in threadpool_info() "
                "if i['internal_api'] == 'openblas'][0], os.environ.get('OPENBLAS_CORETYPE'))")


def test_importing_torch_on_this_machine():
    """What OpenBLAS picks alone, then after ``import torch``: the rule's set where one applies
    (numpy.show_runtime's threadpoolctl reports it too), else unchanged; the environment stays
    as it was."""
    (native,) = _in_fresh_process(_NATIVE)
    if native == "None":
        pytest.skip("numpy's BLAS here is not OpenBLAS")
    key = (bk.cpuinfo("vendor_id"), bk.cpuinfo("cpu family"), native)
    expected = bk._FASTER.get(key, native)
    assert _in_fresh_process(_AFTER_TORCH) == [expected, expected, "None"]
    # numpy imported and used before torch: switched all the same (the bits of our products do
    # not depend on the order of the imports); the user's own choice is left as it is
    assert _in_fresh_process("import numpy as np\nnp.ones((64, 64), np.float32) @ "
                             "np.ones((64, 64), np.float32)\n" + _AFTER_TORCH
                             ) == [expected, expected, "None"]
    assert _in_fresh_process(_AFTER_TORCH, OPENBLAS_CORETYPE=native) == [native, native, native]
