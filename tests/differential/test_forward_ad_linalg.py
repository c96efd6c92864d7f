"""Forward-mode tangents of the linear-algebra operators against upstream torch 2.13.0 (separate
processes): linalg.solve (left and right, vector right-hand sides, batches, a transposed A),
inv, lu_factor/lu_solve in its four left/adjoint forms, solve_triangular, triangular_solve,
lu_factor and lu (square, wide, tall), qr (square, tall, wide, complete), pinv, lstsq (solution
and residuals), eigh and eig (real and complex; eigenvectors through gauge-invariant absolute
values), svd (square, tall, wide, full), cholesky_solve and cholesky_inverse (lower and upper),
and second derivatives through solve. Every case runs in float32 on both sides and in float64 on upstream;
ours is judged by ``compare.elementwise`` (tolerance from upstream's own float32-vs-float64
error)."""

from __future__ import annotations

from tangent_compare import (agreement_test, disagreements, needs_upstream, ours_json,
                             upstream_fixture)

PROGRAM = r'''
import json, warnings, torch
warnings.simplefilter("ignore")
from torch.func import jvp
def rnd(*s, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*s, generator=g, dtype=torch.float64).to(dtype)
out = {}
for dt in (torch.float32, torch.float64):
    A = rnd(4, 4, seed=1, dtype=dt) + 3 * torch.eye(4, dtype=dt); dA = rnd(4, 4, seed=2, dtype=dt)
    B = rnd(4, 3, seed=3, dtype=dt); dB = rnd(4, 3, seed=4, dtype=dt)
    b = rnd(4, seed=5, dtype=dt); db = rnd(4, seed=6, dtype=dt)
    W = rnd(3, 5, seed=7, dtype=dt); dW = rnd(3, 5, seed=8, dtype=dt)
    T = rnd(5, 3, seed=9, dtype=dt); dT = rnd(5, 3, seed=10, dtype=dt)
    C = rnd(2, 4, 4, seed=11, dtype=dt) + 3 * torch.eye(4, dtype=dt); dC = rnd(2, 4, 4, seed=12, dtype=dt)
    E, dE = rnd(4, 4, seed=13, dtype=dt), rnd(4, 4, seed=14, dtype=dt)
    H, dH = E + E.mT, dE + dE.mT
    cA = torch.complex(E, rnd(4, 4, seed=15, dtype=dt)); cdA = torch.complex(dE, rnd(4, 4, seed=16, dtype=dt))
    cH, cdH = cA + cA.mH, cdA + cdA.mH
    b2, db2 = rnd(5, 2, seed=17, dtype=dt), rnd(5, 2, seed=18, dtype=dt)
    Lc = torch.linalg.cholesky(E @ E.mT + torch.eye(4, dtype=dt)); dLc = dE.tril()
    cases = {
        "solve": lambda: jvp(torch.linalg.solve, (A, B), (dA, dB))[1],
        "solve_vec": lambda: jvp(torch.linalg.solve, (A, b), (dA, db))[1],
        "solve_right": lambda: jvp(lambda a, x: torch.linalg.solve(a, x.mT, left=False), (A, B), (dA, dB))[1],
        "solve_noncontig": lambda: jvp(lambda a, x: torch.linalg.solve(a.mT, x), (A, B), (dA, dB))[1],
        "solve_batched": lambda: jvp(lambda a: torch.linalg.solve(a, B), (C,), (dC,))[1],
        "inv": lambda: jvp(torch.linalg.inv, (A,), (dA,))[1],
        "lu_solve": lambda: jvp(lambda a, x: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), x), (A, B), (dA, dB))[1],
        "lu_solve_adjoint": lambda: jvp(lambda a, x: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), x, adjoint=True), (A, B), (dA, dB))[1],
        "lu_solve_right": lambda: jvp(lambda a, x: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), x.mT, left=False), (A, B), (dA, dB))[1],
        "lu_solve_right_adjoint": lambda: jvp(lambda a, x: torch.linalg.lu_solve(*torch.linalg.lu_factor(a), x.mT, left=False, adjoint=True), (A, B), (dA, dB))[1],
        "solve_triangular": lambda: jvp(lambda a, x: torch.linalg.solve_triangular(a, x, upper=True), (A, B), (dA, dB))[1],
        "solve_triangular_unit_right": lambda: jvp(lambda a, x: torch.linalg.solve_triangular(a, x.mT, upper=False, left=False, unitriangular=True), (A, B), (dA, dB))[1],
        "triangular_solve": lambda: jvp(lambda a, x: torch.triangular_solve(x, a)[0], (A, B), (dA, dB))[1],
        "triangular_solve_T": lambda: jvp(lambda a, x: torch.triangular_solve(x, a, upper=False, transpose=True)[0], (A, B), (dA, dB))[1],
        "lu_factor": lambda: jvp(lambda a: torch.linalg.lu_factor(a)[0], (A,), (dA,))[1],
        "lu_factor_wide": lambda: jvp(lambda a: torch.linalg.lu_factor(a)[0], (W,), (dW,))[1],
        "lu_factor_tall": lambda: jvp(lambda a: torch.linalg.lu_factor(a)[0], (T,), (dT,))[1],
        "lu": lambda: jvp(lambda a: torch.linalg.lu(a)[1:], (A,), (dA,))[1],
        "lu_wide": lambda: jvp(lambda a: torch.linalg.lu(a)[1:], (W,), (dW,))[1],
        "lu_tall": lambda: jvp(lambda a: torch.linalg.lu(a)[1:], (T,), (dT,))[1],
        "qr": lambda: jvp(torch.linalg.qr, (A,), (dA,))[1],
        "qr_tall": lambda: jvp(torch.linalg.qr, (T,), (dT,))[1],
        "qr_wide": lambda: jvp(torch.linalg.qr, (W,), (dW,))[1],
        "qr_complete_wide": lambda: jvp(lambda a: torch.linalg.qr(a, mode="complete"), (W,), (dW,))[1],
        "pinv_wide": lambda: jvp(torch.linalg.pinv, (W,), (dW,))[1],
        "pinv_tall": lambda: jvp(torch.linalg.pinv, (T,), (dT,))[1],
        "eigh": lambda: jvp(torch.linalg.eigh, (H,), (dH,))[1],
        "eigh_complex_values": lambda: jvp(lambda a: torch.linalg.eigh(a)[0], (cH,), (cdH,))[1],
        "eigh_complex_vectors_abs": lambda: jvp(lambda a: torch.linalg.eigh(a)[1].abs(), (cH,), (cdH,))[1],
        "eig_values": lambda: torch.view_as_real(jvp(lambda a: torch.linalg.eig(a)[0], (E,), (dE,))[1]),
        "eig_vectors_abs": lambda: jvp(lambda a: torch.linalg.eig(a)[1].abs(), (E,), (dE,))[1],
        "svd": lambda: jvp(lambda a: torch.linalg.svd(a, full_matrices=False), (E,), (dE,))[1],
        "svd_tall": lambda: jvp(lambda a: torch.linalg.svd(a, full_matrices=False), (T,), (dT,))[1],
        "svd_tall_full": lambda: jvp(torch.linalg.svd, (T,), (dT,))[1],
        # the wide SVD's singular vectors: their absolute values (our kernel's signs differ)
        "svd_wide_abs": lambda: jvp(lambda a: tuple(t.abs() for t in torch.linalg.svd(a, full_matrices=False)), (W,), (dW,))[1],
        "svd_complex_abs": lambda: jvp(lambda a: torch.linalg.svd(a)[0].abs(), (cA,), (cdA,))[1],
        "lstsq": lambda: jvp(lambda a, x: torch.linalg.lstsq(a, x).solution, (T, b2), (dT, db2))[1],
        "lstsq_residuals": lambda: jvp(lambda a, x: torch.linalg.lstsq(a, x, driver="gelsd").residuals, (T, b2), (dT, db2))[1],
        "cholesky_solve": lambda: jvp(lambda l, x: torch.cholesky_solve(x, l), (Lc, B), (dLc, dB))[1],
        "cholesky_solve_upper": lambda: jvp(lambda u, x: torch.cholesky_solve(x, u, upper=True), (Lc.mT, B), (dLc.mT, dB))[1],
        "cholesky_inverse": lambda: jvp(torch.cholesky_inverse, (Lc,), (dLc,))[1],
        "cholesky_inverse_upper": lambda: jvp(lambda u: torch.cholesky_inverse(u, upper=True), (Lc.mT,), (dLc.mT,))[1],
        "solve_hessian": lambda: torch.func.hessian(lambda a: torch.linalg.solve(a, b).sum())(A),
        "inv_hessian": lambda: torch.func.hessian(lambda a: torch.linalg.inv(a).sum())(A),
        "solve_jacfwd_jacfwd": lambda: torch.func.jacfwd(torch.func.jacfwd(lambda a: torch.linalg.solve(a, b).sum()))(A),
        "solve_jacfwd_grad": lambda: torch.func.jacfwd(torch.func.grad(lambda a: torch.linalg.solve(a, b).sum()))(A),
    }
    for k, f in cases.items():
        v = f()
        v = torch.cat([t.reshape(-1).double() for t in v]) if isinstance(v, tuple) else v
        out.setdefault(k, {})[str(dt)] = [float(x) for x in v.double().reshape(-1)]
print(json.dumps(out))
'''

# the control's fault: the solve tangent's sign flipped
FLIPPED = r"""
from torchnative.csrc.autograd.forward import linalg_jvp as _lj
_orig = _lj.linalg_solve_jvp
def _flipped(*a, **k):
    return -_orig(*a, **k)
_flipped.__module__ = _lj.__name__
_lj.linalg_solve_jvp = _flipped
"""


theirs = upstream_fixture(PROGRAM)


test_linalg_tangents_agree = agreement_test(PROGRAM)


@needs_upstream
def test_a_wrong_solve_tangent_is_caught(theirs):
    """The control: linalg_solve_jvp with its sign flipped is caught on every first-order solve
    case, the operators that do not reach it (inv has its own formula) still agree. (jacfwd of
    jacfwd flips twice and agrees: not a case for this control.)"""
    bad = disagreements(ours_json(FLIPPED + PROGRAM), theirs)
    assert {"solve", "solve_vec", "solve_right", "solve_noncontig", "solve_batched",
            "solve_jacfwd_grad"} <= set(bad), bad
    assert not {"inv", "lu_solve", "qr", "pinv_wide", "triangular_solve"} & set(bad), bad
