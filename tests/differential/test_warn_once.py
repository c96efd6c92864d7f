"""Warnings upstream gives once per process (TORCH_WARN_ONCE), against upstream: which calls warn,
how many times, with which message, category and line. Upstream's text ends with "(Triggered
internally at <its C++ file>)", a file ours does not have: compared without that suffix."""

from __future__ import annotations

import re

from torchnative.testing import upstream

PROGRAM = r"""
import json, warnings, numpy as np, torch
out = {}

def record(name, fn, times=2):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        for _ in range(times):
            try:
                fn()
            except Exception as e:
                out[name + " error"] = f"{type(e).__name__}: {e}"
    out[name] = [[str(w.message), w.category.__name__, w.lineno] for w in got]

x = torch.ones((), requires_grad=True)
record("float of a leaf that requires grad", lambda: float(x))
record("float of another one", lambda: float((x * 2).reshape(1)))
record("complex of one", lambda: complex(torch.ones(1, requires_grad=True)))
record("float of a detached one", lambda: float(torch.ones((), requires_grad=True).detach()))
record("int, bool, item of one", lambda: (int(torch.ones((), requires_grad=True)),
                                          bool(torch.ones((), requires_grad=True)),
                                          torch.ones((), requires_grad=True).item()))
record("float of two values", lambda: float(torch.ones(2, requires_grad=True)))
record("where with a uint8 condition", lambda: torch.where(torch.tensor([1, 0], dtype=torch.uint8),
                                                           torch.ones(2), torch.zeros(2)))
a = np.arange(4.0); a.flags.writeable = False
record("from_numpy of a read-only array", lambda: torch.from_numpy(a))
record("complex to real", lambda: torch.tensor([1 + 2j]).to(torch.float32))
record("searchsorted, non-contiguous", lambda: torch.searchsorted(
    torch.arange(8.0).reshape(2, 4).t().contiguous().t(), torch.ones(2, 1)))
print(json.dumps(out))
"""

_SUFFIX = re.compile(r" \(Triggered internally at [^)]*\)\Z", re.S)


def _strip(results: dict) -> dict:
    return {k: [[_SUFFIX.sub("", m), c, n] for m, c, n in v] if isinstance(v, list) else v
            for k, v in results.items()}


def test_warn_once_agrees_with_upstream():
    if not upstream.available():
        upstream.missing("the upstream comparison environment")
    ours, up = upstream.run_both(PROGRAM)
    ours, up = _strip(ours), _strip(up)
    assert ours == up, {k: (ours.get(k), up.get(k)) for k in up if ours.get(k) != up[k]}
    # controls: the cases tell warning once, never and per call apart
    assert len(up["float of a leaf that requires grad"]) == 1
    assert up["float of another one"] == [] and up["float of a detached one"] == []
    assert len(up["where with a uint8 condition"]) == 1
