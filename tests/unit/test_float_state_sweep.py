"""Every OpInfo operator on non-finite inputs, with warnings recorded: no numpy float warning
("... encountered in ...") escapes our kernels (upstream's C++ prints none). The first sample of
each float32 entry, its floating tensors poisoned with +-inf, then with NaN. Slow (``--slow``):
a few minutes; tests/unit/test_float_state.py holds the fast cases and the control."""

from __future__ import annotations

import warnings

import pytest
import torch

pytestmark = pytest.mark.slow


def _poison(t, how):
    if not (isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel() >= 2
            and t.is_contiguous()):
        return t
    t = t.detach().clone()
    flat = t.view(-1)
    if how == "inf":
        flat[0], flat[-1] = float("inf"), float("-inf")
    else:
        flat[0] = float("nan")
    return t


def _float_warnings(op, sample, how):
    args = [_poison(a, how) for a in sample.args]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            op(_poison(sample.input, how), *args, **sample.kwargs)
        except Exception:   # an error is another test's business; only warnings are counted
            pass
    return [f"{w.message} ({w.filename.rsplit('/', 1)[-1]}:{w.lineno})" for w in seen
            if issubclass(w.category, RuntimeWarning) and "encountered in" in str(w.message)]


def test_no_numpy_float_warning_escapes_an_operator():
    from torch.testing._internal.common_methods_invocations import op_db

    leaks, tried = {}, 0
    for op in op_db:
        if torch.float32 not in op.supported_dtypes("cpu"):
            continue
        try:
            sample = next(iter(op.sample_inputs("cpu", torch.float32, requires_grad=False)))
        except Exception:
            continue
        for how in ("inf", "nan"):
            tried += 1
            found = _float_warnings(op, sample, how)
            if found:
                leaks[f"{op.name}.{op.variant_test_name} ({how})"] = found[0]
    assert tried > 800
    assert not leaks, "\n".join(f"{k}: {v}" for k, v in sorted(leaks.items()))
