"""The conventions of upstream's CPU linalg that fix values the mathematics leaves free, against
upstream torch 2.13.0: singular-vector signs of real matrices (MKL's gesdd bidiagonalizes wide
ones directly where reference LAPACK first takes an LQ factorization, and QR-factorizes tall
ones first from m >= 3n/2 where reference LAPACK waits for 11n/6), torch.svd's out= V (the
conjugate transpose of Vh, conjugated in place) and matrix_exp in float16/bfloat16 (computed in
the dtype, with the coefficient blobs upstream reads as 16-bit values).

Factors are compared directly, not through reconstructions: a flipped sign must fail. Values
are judged at the tolerance derived from upstream's own float32-vs-float64 error
(agreement_compare.py, normwise as LAPACK's bounds are); the 16-bit exponentials exactly, NaN
where upstream has NaN; the out= errors by type and message. Each convention has a control:
the alternative it replaces (reference LAPACK's own path, an unconjugated V, the exact
exponential) must be told apart from upstream's result.
"""

from __future__ import annotations

import numpy as np
import pytest

import sides
from agreement_compare import compare
from torchnative.testing import upstream

pytestmark = pytest.mark.skipif(not upstream.available(), reason="upstream torch env missing")

PROGRAM = r'''
rng = np.random.default_rng(11)
W35, W48, W230, W23 = (rng.standard_normal(s) for s in ((3, 5), (4, 8), (2, 30), (2, 3)))
WB = rng.standard_normal((2, 3, 6))
T53, T43, T64 = (rng.standard_normal(s) for s in ((5, 3), (4, 3), (6, 4)))
C35 = rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))
L = torch.linalg

def native(a, full):
    # reference LAPACK (numpy's) on its own thresholds
    u, s, vh = np.linalg.svd(a.double().numpy(), full_matrices=full)
    return tuple(torch.from_numpy(x).to(a.dtype) for x in (u, s, vh))

for name, m in (("w35", W35), ("w48", W48), ("w230", W230), ("w23", W23), ("wb", WB), ("t53", T53),
                ("t43", T43), ("t64", T64), ("c35", C35)):
    case(f"svd_{name}", lambda a: L.svd(a, full_matrices=False), m)
    case(f"svd_full_{name}", lambda a: L.svd(a), m)
case("svd_native_w35", lambda a: native(a, False), W35)
case("svd_native_w48", lambda a: native(a, False), W48)
case("svd_native_w23", lambda a: native(a, False), W23)
case("svd_native_t43", lambda a: native(a, False), T43)

def lowrank(a, b):  # svd_lowrank's OpInfo: its 2x3 sketch B = Q^H A takes the SVD above
    torch.manual_seed(42)
    return torch.svd_lowrank(a @ b.mT, q=2)

F1, F2 = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
case("svd_lowrank", lowrank, F1, F2)

def svd_out(a, some=True):
    U, S, V = (torch.empty(0, dtype=d) for d in (a.dtype, a.real.dtype, a.dtype))
    torch.svd(a, some=some, out=(U, S, V))
    return U, S, V, V.is_conj()

case("svd_out_c", svd_out, C35)
case("svd_out_c_full", lambda a: svd_out(a, some=False), C35)
case("svd_out_r", svd_out, W35)
case("svd_out_no_uv", lambda a: torch.svd(a, compute_uv=False, out=tuple(
    torch.empty(0, dtype=d) for d in (a.dtype, a.real.dtype, a.dtype))), C35)
case("svd_unconjugated_v", lambda a: (lambda u, s, vh: (u, s, vh.mT, False))(
    *L.svd(a, full_matrices=False)), C35)

def empties(*dtypes):
    return tuple(torch.empty(0, dtype=getattr(torch, d)) for d in dtypes)

ca = torch.tensor(C35, dtype=torch.complex64)
error("err_svd_out_u_dtype", lambda: torch.svd(ca, out=empties("float32", "float32", "complex64")))
error("err_svd_out_s_dtype", lambda: torch.svd(ca, out=empties("complex64", "complex64", "complex64")))
error("err_svd_out_no_uv_dtype", lambda: torch.svd(ca, compute_uv=False,
                                                    out=empties("complex64", "float32", "float64")))
error("err_svd_out_1d", lambda: torch.svd(torch.ones(3), out=empties("float32", "float32", "float32")))
error("err_linalg_svd_out_dtype", lambda: torch.linalg.svd(ca, out=empties("float32", "float32",
                                                                          "complex64")))
error("err_svdvals_1d", lambda: torch.linalg.svdvals(torch.ones(3)))
error("err_svdvals_nan", lambda: torch.linalg.svdvals(torch.full((3, 3), float("nan"))))
U, S, V = empties("complex64", "float32", "complex64")
torch.svd(ca, out=(U, S, V))
RESULTS["svd_out_strides"] = [list(U.stride()), list(V.stride()), U.is_conj(), V.is_conj()]

E = rng.standard_normal((4, 4)); E = E / np.abs(E).sum(0).max()
EXPS = {}
values = lambda t: t.float().numpy().tolist()  # exact for 16-bit values; NaN payloads dropped
for dt in ("float16", "bfloat16"):
    for norm in (1e-5, 1e-3, 0.02, 0.8, 3.0, 40.0):
        a = torch.tensor(E * norm, dtype=getattr(torch, dt))
        EXPS[f"{dt}|{norm}"] = values(torch.matrix_exp(a))
        EXPS[f"{dt}|{norm}|batch"] = values(torch.matrix_exp(torch.stack([a, 2 * a])))
        EXPS[f"{dt}|{norm}|exact"] = values(torch.matrix_exp(a.double()).to(a.dtype))
RESULTS["matrix_exp_low"] = EXPS
print(json.dumps(RESULTS))
'''

NAMES = ["w35", "w48", "w230", "w23", "wb", "t53", "t43", "t64", "c35"]


@pytest.fixture(scope="module")
def results():
    return sides.on_both(PROGRAM, profiles=True)


@pytest.mark.parametrize("full", [False, True])
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("width", ["float32", "float64"])
def test_singular_vectors_agree(results, name, full, width):
    ours, up = results
    key = f"svd_{'full_' if full else ''}{name}.{width}"
    assert compare(ours, up, key, normwise=True) is None, compare(ours, up, key, normwise=True)


@pytest.mark.parametrize("width", ["float32", "float64"])
def test_lowrank_agrees(results, width):
    ours, up = results
    problem = compare(ours, up, f"svd_lowrank.{width}", normwise=True)
    assert problem is None, problem


@pytest.mark.parametrize("name", ["w35", "w48", "w23", "t43"])
def test_control_reference_lapack_signs_differ(results, name):
    """Control: numpy's reference LAPACK, as it runs (LQ first for the wide ones, no QR first
    for 4x3), gives other signs than upstream; the comparison must say so."""
    ours, up = results
    native = {f"svd_{name}.float64": ours[f"svd_native_{name}.float64"]}
    assert compare(native, up, f"svd_{name}.float64", normwise=True) is not None


@pytest.mark.parametrize("key", ["svd_out_c", "svd_out_c_full", "svd_out_r", "svd_out_no_uv"])
@pytest.mark.parametrize("width", ["float32", "float64"])
def test_svd_out_agrees(results, key, width):
    ours, up = results
    problem = compare(ours, up, f"{key}.{width}", normwise=True)
    assert problem is None, problem


ERRORS = ["err_svd_out_u_dtype", "err_svd_out_s_dtype", "err_svd_out_no_uv_dtype", "err_svd_out_1d",
          "err_linalg_svd_out_dtype", "err_svdvals_1d", "err_svdvals_nan"]


@pytest.mark.parametrize("name", ERRORS)
def test_svd_errors_agree(results, name):
    ours, up = results
    assert up[name]["error"] != "none", "the case must raise on upstream"
    assert ours[name] == up[name]


def test_svd_out_layout_agrees(results):
    """U and V as upstream's svd_out leaves them: U column-major, V transposed back."""
    ours, up = results
    assert ours["svd_out_strides"] == up["svd_out_strides"]


def test_control_unconjugated_v_differs(results):
    """Control: V written without the conjugation (what out= wrote before) must be caught."""
    ours, up = results
    wrong = {"svd_out_c.float64": ours["svd_unconjugated_v.float64"]}
    assert compare(wrong, up, "svd_out_c.float64", normwise=True) is not None


def test_low_precision_matrix_exp_bit_for_bit(results):
    ours, up = results
    mine, theirs = ours["matrix_exp_low"], up["matrix_exp_low"]
    assert mine.keys() == theirs.keys()
    differ = [k for k in theirs if not k.endswith("|exact") and not _same(mine[k], theirs[k])]
    assert not differ, differ


def test_control_exact_exponential_differs(results):
    """Control: the exact exponential rounded once (what ours computed before) is not
    upstream's float16/bfloat16 result, so the bit-for-bit test could fail."""
    _, up = results
    exps = up["matrix_exp_low"]
    singles = [k for k in exps if k.count("|") == 1]
    assert sum(not _same(exps[k], exps[k + "|exact"]) for k in singles) >= len(singles) // 2


def _same(a, b) -> bool:
    """Equal values, NaN where the other has NaN (its sign and payload aside)."""
    return np.array_equal(np.array(a, dtype=np.float64), np.array(b, dtype=np.float64),
                          equal_nan=True)
