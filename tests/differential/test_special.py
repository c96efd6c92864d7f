"""torch.special against upstream torch 2.13.0: the Bessel family, Airy Ai, the i0/i1 family,
zeta and polygamma, ndtri, erfcx, log_ndtr and the orthogonal polynomials, on grids that cross
every branch point of upstream's (Cephes-derived) algorithms, plus infinities, NaN and signed
zeros; and the composite tail (diff, cov, corrcoef, trapezoid, quantile ...).

Both torches run the same program in their own processes (``sides.on_both``).
float32 results agree when within the tolerance derived from upstream's own float32-vs-float64
error, or no farther from upstream's float64 result than upstream's float32 result is (ours
evaluates in double precision and rounds once); float64 results at that tolerance carried over
in ulps (agreement_compare.py). NaN and infinity positions, dtypes, shapes and errors are exact.
"""

from __future__ import annotations

import re

import pytest

import sides
from agreement_compare import compare
from torchnative.testing import upstream

pytestmark = pytest.mark.skipif(not upstream.available(), reason="upstream torch env missing")

PROGRAM = r'''
S = torch.special
EDGES = [0.0, -0.0, 1e-6, -1e-6, 0.5, 1.0, -1.0, 2.0, 2.09, -2.09, 5.0, -5.0, 8.0, 8.3203353,
         50.0, 51.0, -6.1, -6.2, -26.7, 103.9, 1e8, float("inf"), float("-inf"), float("nan")]
X = np.concatenate([np.array(EDGES), np.linspace(-30, 30, 241)])
P = np.concatenate([np.array([0.0, 1.0, 1e-20, 1 - 1e-7, 0.13533528323661269189, -0.1, 1.2,
                              float("nan")]), np.linspace(0.001, 0.999, 97)])
for f in ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
          "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
          "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
          "airy_ai", "i0", "i0e", "i1", "i1e", "erfcx", "log_ndtr"]:
    case(f, getattr(S, f), X)
case("ndtri", S.ndtri, P)
Q = np.concatenate([np.array([-3.0, -2.5, 0.0, 1.0, 1e-3]), np.linspace(-2.9, 12, 40)])
case("zeta", lambda q: S.zeta(torch.full_like(q, 3.5), q), Q)
case("zeta_x", lambda x: S.zeta(x, torch.full_like(x, 2.0)), np.linspace(0.5, 8, 16))
case("zeta_scalar", lambda q: S.zeta(2.0, q), Q)
case("polygamma2", lambda x: torch.polygamma(2, x), Q)
case("polygamma5", lambda x: torch.polygamma(5, x), Q)
# no NaN x: upstream's recurrences stop at a NaN before assigning their result and return an
# uninitialized value (whatever the register held: 0, a denormal, the previous element's result)
XS = np.concatenate([np.array([0.0, 1.0, -1.0, 0.5, 2.0]), np.linspace(-1.6, 1.6, 33)])
NS = np.array([-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13, 20])
for f in ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
          "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
          "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
          "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
          "laguerre_polynomial_l", "legendre_polynomial_p"]:
    case(f, lambda x, n, f=f: getattr(S, f)(x[:, None], n[None, :]), XS, NS.astype(np.float64))
    case(f + "_n_scalar", lambda x, f=f: getattr(S, f)(x, 7), XS)
case("gammainc_alias_softmax", lambda x: S.softmax(x, 0), np.linspace(-3, 3, 7))
case("logsumexp", lambda x: S.logsumexp(x, [0]), np.linspace(-3, 3, 7))

rng = np.random.default_rng(3)
M = rng.standard_normal((4, 7))
case("diff", lambda a: [torch.diff(a), torch.diff(a, n=2, dim=0),
                        torch.diff(a, dim=1, prepend=a[:, :2], append=a[:, :1])], M)
case("cov", lambda a: [torch.cov(a), torch.cov(a[0]), torch.cov(a, correction=0)], M)
case("cov_weights", lambda a, f, w: torch.cov(a, fweights=f, aweights=w), M,
     np.array([1, 2, 0, 3, 1, 1, 2]), np.abs(rng.standard_normal(7)))
case("corrcoef", torch.corrcoef, M)
case("trapezoid", lambda a: [torch.trapezoid(a), torch.trapezoid(a, dx=0.5, dim=0),
                             torch.cumulative_trapezoid(a)], M)
case("trapezoid_x", lambda a, x: [torch.trapezoid(a, x), torch.cumulative_trapezoid(a, x)], M,
     np.cumsum(np.abs(rng.standard_normal(7))))
case("quantile", lambda a, q: [torch.quantile(a, q, dim=1, keepdim=True),
                               torch.quantile(a, 0.3), torch.nanquantile(a, q, dim=0)],
     M, np.array([0.0, 0.25, 0.5, 1.0]))
for mode in ["lower", "higher", "nearest", "midpoint"]:
    case("quantile_" + mode, lambda a, mode=mode: torch.quantile(a, 0.4, dim=1,
                                                                 interpolation=mode), M)
MN = M.copy(); MN[1, 3] = float("nan")
case("quantile_nan", lambda a: [torch.quantile(a, 0.5, dim=1), torch.nanquantile(a, 0.5, dim=1)],
     MN)
case("histogram", lambda a, w: list(torch.histogram(a.flatten(), 5)) + list(torch.histogram(
     a.flatten(), 4, range=(-1.0, 1.0), weight=w, density=True)) + list(torch.histogram(
     a.flatten(), torch.sort(a[0]).values)), M, np.abs(rng.standard_normal(28)))
case("gradient", lambda a, c0, c1: list(torch.gradient(a)) + list(torch.gradient(
     a, spacing=2.0, dim=1, edge_order=2)) + list(torch.gradient(a, spacing=(c0, c1),
     edge_order=2)), M, np.cumsum(np.abs(rng.standard_normal(4)) + 0.1),
     np.cumsum(np.abs(rng.standard_normal(7)) + 0.1))
case("cross", lambda a, b: torch.cross(a, b, dim=0), rng.standard_normal((3, 4)),
     rng.standard_normal((3, 4)))

error("err_bessel_half", lambda: S.bessel_j0(torch.ones(3, dtype=torch.half)))
error("err_poly_half", lambda: S.chebyshev_polynomial_t(torch.ones(3, dtype=torch.half), 2))
error("err_zeta_half", lambda: S.zeta(torch.ones(3, dtype=torch.half), torch.ones(3, dtype=torch.half)))
error("err_polygamma_neg", lambda: torch.polygamma(-1, torch.ones(3)))
error("err_quantile_q", lambda: torch.quantile(torch.ones(3), 1.5))
error("err_quantile_mode", lambda: torch.quantile(torch.ones(3), 0.5, interpolation="x"))
error("err_quantile_empty", lambda: torch.quantile(torch.ones(0), 0.5))
error("err_quantile_int", lambda: torch.quantile(torch.ones(3, dtype=torch.long), 0.5))
error("err_diff_order", lambda: torch.diff(torch.ones(3), n=-1))
error("err_cov_dims", lambda: torch.cov(torch.ones(2, 2, 2)))
error("err_cross_dim", lambda: torch.cross(torch.ones(2, 2), torch.ones(2, 2)))
error("err_gradient_order", lambda: torch.gradient(torch.ones(3, 3), edge_order=3))
error("err_gradient_size", lambda: torch.gradient(torch.ones(2, 2), edge_order=2))
error("err_histogram_bins", lambda: torch.histogram(torch.ones(3), 0))
error("err_histogram_range", lambda: torch.histogram(torch.ones(3), 3, range=(2.0, 1.0)))
error("err_histogram_long", lambda: torch.histogram(torch.ones(3, dtype=torch.long), 3))
print(json.dumps(RESULTS))
'''


@pytest.fixture(scope="module")
def results():
    return sides.on_both(PROGRAM, profiles=True)


def _names(kind):
    names = re.findall(r'(?:case|error)\("([a-z0-9_]*[a-z0-9])"[,)]', PROGRAM)
    return [n for n in names if n.startswith("err_") == (kind == "error")]


def _loop_names():
    """Cases the program names in loops (case(f, ...), case(f + "_n_scalar", ...))."""
    block = re.findall(r'for f in \[(.*?)\]:', PROGRAM, re.S)
    out = []
    for b in block:
        for f in re.findall(r'"([a-z0-9_]+)"', b):
            out.append(f)
            if "polynomial" in f:
                out.append(f + "_n_scalar")
    return out + ["quantile_" + m for m in ("lower", "higher", "nearest", "midpoint")]


@pytest.mark.parametrize("name", _names("value") + _loop_names())
@pytest.mark.parametrize("width", ["float32", "float64"])
def test_values_agree(results, name, width):
    ours, up = results
    problem = compare(ours, up, f"{name}.{width}")
    assert problem is None, problem


@pytest.mark.parametrize("name", _names("error"))
def test_errors_agree(results, name):
    ours, up = results
    assert up[name]["error"] != "none", "the case must raise on upstream"
    assert compare(ours, up, name) is None, compare(ours, up, name)


def test_comparison_catches_a_wrong_branch(results):
    """Control: results from a neighbouring function (j1 for j0, k1 for k0) must not pass."""
    ours, up = results
    for right, wrong in (("bessel_j0", "bessel_j1"), ("modified_bessel_k0", "modified_bessel_k1")):
        key = f"{right}.float64"
        assert compare(ours, up, key) is None
        assert compare({key: ours[f"{wrong}.float64"]}, up, key) is not None
