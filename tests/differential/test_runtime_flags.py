"""torch._C's global switches (``_get_X``/``_set_X`` pairs) against upstream torch 2.13.0, each in
its own process: every switch ours implements reads upstream's default, and oneDNN's TF32
switch (Intel GPUs only) answers None, warns when set and refuses a non-bool as upstream."""

from __future__ import annotations

import pytest

from torchnative.testing.upstream import available, run_both

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

PROGRAM = r'''
import json, warnings, torch
C = torch._C
out = {"defaults": {}, "refused": []}
for name in sorted(dir(C)):
    if not name.startswith("_get_") or not hasattr(C, "_set_" + name[len("_get_"):]):
        continue
    try:
        out["defaults"][name] = repr(getattr(C, name)())
    except Exception as e:
        if type(e).__name__ == "TorchnativeNotImplementedError":
            out["refused"].append(name)
        else:
            out["defaults"][name] = type(e).__name__
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    C._set_onednn_allow_tf32(True)
    C._set_onednn_allow_tf32(False)
out["onednn set"] = [repr(C._get_onednn_allow_tf32()),
                     [str(x.message).split(" (Triggered internally")[0] for x in w]]
try:
    C._set_onednn_allow_tf32(1)
    out["onednn int"] = "no error"
except Exception as e:
    out["onednn int"] = [type(e).__name__, str(e)]
print(json.dumps(out))
'''


# no quantized engine (upstream's default is x86's, QEngine 4): torch.backends.quantized lists none
KNOWN = {"_get_qengine": "0"}


def test_runtime_flags_as_upstream():
    ours, theirs = run_both(PROGRAM)
    assert theirs["defaults"]["_get_onednn_allow_tf32"] == "None"
    assert len(theirs["onednn set"][1]) == 2  # the program reaches what it tests
    assert not theirs["refused"]
    # ours' refused switches are named in its own output (each raises by name); the others agree
    # but for what ours states it lacks
    compared = {k: v for k, v in theirs["defaults"].items() if k not in ours["refused"]}
    compared.update(KNOWN)
    assert {k: ours["defaults"].get(k) for k in compared} == compared
    assert "_get_onednn_allow_tf32" not in ours["refused"]
    assert ours["onednn set"] == theirs["onednn set"]
    assert ours["onednn int"] == theirs["onednn int"]
