"""LU factorization rounded as upstream's LAPACK (MKL's getrf): in the input's own precision,
the column scaled by the pivot's reciprocal, the trailing update fused into one multiply-add on
MKL's AVX2/AVX-512 branches and not on the others (``csrc/platform/mkl_path.py``). Exactly
singular inputs then find upstream's exact zero pivot where its branch does (info and the error
of lu_factor) and its residue (6e-10 in float32) where it does not, and most small factorizations agree bit
for bit, under the branch MKL takes on this machine and under each branch pinned by
``MKL_CBWR`` (both sides read it).

The controls run the former computation (float64, columns divided, rounded once) and the other
branch's rounding on the same inputs: each misses the bit-for-bit agreement, so the criteria
below can tell them apart."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.csrc.platform import cpu_capability, mkl_path
from torchnative.testing import upstream

PROGRAM = r'''
import json, torch
torch.manual_seed(0)
out = {"singular": [], "random": []}
for dt in (torch.float32, torch.float64):
    for n in (3, 4):
        A = torch.sin(torch.arange(n * n, dtype=dt)).reshape(n, n)
        LU, piv, info = torch.linalg.lu_factor_ex(A)
        out["singular"].append([str(dt), n, LU.tolist(), piv.tolist(), info.item()])
    A = torch.sin(torch.arange(9, dtype=dt)).reshape(3, 3)
    try:
        torch.linalg.lu_factor(A)
        out["singular"].append([str(dt), "raises", None])
    except RuntimeError as e:
        out["singular"].append([str(dt), "raises", str(e)])
for dt in (torch.float32, torch.float64):
    for n in (2, 3, 4, 5, 8, 12):
        for rep in range(4):
            A = torch.randn(n, n + rep % 2, dtype=dt)
            LU, piv, info = torch.linalg.lu_factor_ex(A)
            out["random"].append([str(dt), A.tolist(), LU.tolist(), piv.tolist()])
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def results():
    if not upstream.available():
        upstream.missing("upstream torch environment (.venv-upstream)")
    return upstream.run_both(PROGRAM)


def _bit_identical(rows_a, rows_b) -> float:
    same = [np.array_equal(np.asarray(a[2]), np.asarray(b[2])) and a[3] == b[3]
            for a, b in zip(rows_a, rows_b)]
    return sum(same) / len(same)


def _singular_as_upstream(ours, theirs) -> None:
    """info codes, pivots and lu_factor's error as upstream's; the 3x3 factors bit for bit; the
    4x4 ones (rank 2: their trailing block is rounding residue, which MKL's exact update order
    decides) within a few ulp of the matrix's unit scale."""
    assert len(ours) == len(theirs) == 6
    for o, t in zip(ours, theirs):
        assert o[:2] == t[:2]
        if o[1] == "raises":
            assert o == t
            continue
        assert o[3:] == t[3:]                                  # pivots, info
        if o[1] == 3:
            assert o[2] == t[2]
        else:
            eps = np.finfo(np.float32 if o[0] == "torch.float32" else np.float64).eps
            np.testing.assert_allclose(o[2], t[2], rtol=0, atol=8 * eps)


def _zero_pivots(fused: bool) -> list:
    """info of the two exactly singular 3x3 matrices on a branch: 0 where the update is fused
    (a residue), 3 where it is not (an exact zero pivot)."""
    return [0, 0] if fused else [3, 3]


def _infos_3x3(rows) -> list:
    return [r[-1] for r in rows if r[1] == 3]


def test_mkl_branch_as_predicted(results):
    """Upstream's exactly singular 3x3 has its zero pivot (info 3) exactly where ours predicts
    that MKL's branch on this machine does not fuse the update."""
    _, theirs = results
    assert _infos_3x3(theirs["singular"]) == _zero_pivots(mkl_path.FUSED)


def test_exactly_singular_inputs_as_upstream(results):
    ours, theirs = results
    _singular_as_upstream(ours["singular"], theirs["singular"])


def test_small_factorizations_agree_bit_for_bit(results):
    ours, theirs = results
    assert len(ours["random"]) == len(theirs["random"]) == 48
    # measured: 47 of 48 identical; a near tie of two roundings may flip one now and then
    assert _bit_identical(ours["random"], theirs["random"]) >= 0.9


def _wide_divided(a: np.ndarray, dtype) -> tuple[list, list]:
    """The former LU: float64 throughout, the column divided by the pivot, rounded at the end."""
    a = np.array(a, np.float64)
    m, n = a.shape
    piv = []
    for j in range(min(m, n)):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        piv.append(p + 1)
        a[[j, p]] = a[[p, j]]
        if a[j, j] != 0:
            a[j + 1:, j] /= a[j, j]
        a[j + 1:, j + 1:] -= a[j + 1:, j:j + 1] * a[j:j + 1, j + 1:]
    return a.astype(dtype).astype(np.float64).tolist(), piv


def test_control_the_former_rounding_fails_both_criteria(results):
    _, theirs = results
    control = []
    for dt, a, _, _ in theirs["random"]:
        lu, piv = _wide_divided(np.asarray(a), np.float32 if dt == "torch.float32" else np.float64)
        control.append([dt, a, lu, piv])
    assert _bit_identical(control, theirs["random"]) < 0.5
    singular = np.sin(np.arange(9, dtype=np.float32)).reshape(3, 3)
    lu, _ = _wide_divided(singular, np.float32)
    assert lu[2][2] != 0.0  # no zero pivot: the unfused branch's info 3 would be missed


def _branch_available(branch: str) -> None:
    if branch != "COMPATIBLE" and not {"avx2", "fma"} <= cpu_capability.FLAGS:
        pytest.skip(f"MKL's {branch} branch needs AVX2 and FMA, which this CPU lacks")


@pytest.mark.parametrize("branch", ("COMPATIBLE", "AVX2"))
def test_each_mkl_branch_as_upstream(branch):
    """Both sides with MKL_CBWR pinning one branch: ours follows it."""
    if not upstream.available():
        upstream.missing("upstream torch environment (.venv-upstream)")
    _branch_available(branch)
    ours, theirs = upstream.run_both(PROGRAM, env={"MKL_CBWR": branch})
    assert _infos_3x3(theirs["singular"]) == _zero_pivots(mkl_path.on_this_cpu(branch, None))
    _singular_as_upstream(ours["singular"], theirs["singular"])
    assert _bit_identical(ours["random"], theirs["random"]) >= 0.9


def _getrf_in_process(rows) -> list:
    """Ours' getrf kernel on upstream's random matrices, in this process, as ``mkl_path.FUSED``
    now says."""
    from torchnative.csrc.kernels.linalg_common import getrf

    out = []
    for dt, a, _, _ in rows:
        lu, piv, _ = getrf(np.asarray(a, np.float32 if dt == "torch.float32" else np.float64))
        out.append([dt, a, lu.tolist(), piv.tolist()])
    return out


def test_control_the_other_branch_fails(results, monkeypatch):
    """Ours rounding as the branch MKL does not take here misses upstream's bits, and the same
    call on the branch it takes meets them (in this process: on another vendor's CPU no
    MKL_CBWR value selects the fused branch)."""
    _, theirs = results
    assert _bit_identical(_getrf_in_process(theirs["random"]), theirs["random"]) >= 0.9
    monkeypatch.setattr(mkl_path, "FUSED", not mkl_path.FUSED)
    assert _bit_identical(_getrf_in_process(theirs["random"]), theirs["random"]) < 0.5


@pytest.mark.parametrize("env", [{"MKL_CBWR": "COMPATIBLE,STRICT"}, {"MKL_CBWR": "bogus"},
                                 {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2"}],
                         ids=["strict", "unknown-branch", "enable-sse4_2"])
def test_mkl_switches_read_as_upstream(env):
    """MKL's switches as MKL reads them: a ``,STRICT`` suffix, an unknown branch (ignored), an
    instruction cap; ours' zero pivots are upstream's under each."""
    if not upstream.available():
        upstream.missing("upstream torch environment (.venv-upstream)")
    ours, theirs = upstream.run_both(PROGRAM, env=env)
    _singular_as_upstream(ours["singular"], theirs["singular"])


SOLVE_PROGRAM = r'''
import json, torch
torch.manual_seed(0)
out = []
def err(f):
    try:
        f()
        return None
    except Exception as e:
        return f"{type(e).__name__}: {e}"
for dt in (torch.float32, torch.float64):
    for A in (torch.sin(torch.arange(9, dtype=dt)).reshape(3, 3), torch.randn(4, 4, dtype=dt),
              torch.randn(4, 4, dtype=dt).mT):
        _, LU, piv, info = torch.ops.aten._linalg_solve_ex(A, torch.eye(A.shape[0], dtype=dt))
        out.append([str(dt), LU.tolist(), piv.tolist(), info.item(),
                    torch.linalg.inv_ex(A).info.item(), torch.linalg.det(A).item(),
                    err(lambda: torch.linalg.inv(A)), err(lambda: torch.linalg.solve(A, A))])
print(json.dumps(out))
'''


def test_solve_and_inverse_factor_as_upstream():
    """solve and inv factor A itself (2.13's _linalg_solve_ex; det and slogdet factor A^T) in
    A's precision: the saved LU, pivots and info are upstream's, so an exactly singular float32
    matrix is refused by the same error where upstream's branch finds the zero pivot, and det
    keeps upstream's residue."""
    if not upstream.available():
        upstream.missing("upstream torch environment (.venv-upstream)")
    ours, theirs = upstream.run_both(SOLVE_PROGRAM)
    assert len(ours) == len(theirs) == 6
    for o, t in zip(ours, theirs):
        assert o[2:5] == t[2:5] and o[6:] == t[6:], (o[0], o[2:], t[2:])
        eps = np.finfo(np.float32 if o[0] == "torch.float32" else np.float64).eps
        np.testing.assert_allclose(o[1], t[1], rtol=0, atol=8 * eps)
        np.testing.assert_allclose(o[5], t[5], rtol=0, atol=8 * eps)
