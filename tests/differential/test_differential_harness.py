"""The differential harness itself (harness/prelude.py, sides.py and the judges): the encoding
carries every bit and the layout, both sides run the same prelude, and a wrong kernel planted in
ours is caught by each judge while the true kernel passes."""

from __future__ import annotations

import numpy as np
import pytest

import prelude
import sides
from agreement_compare import compare as agreement
from kernel_golden import Golden, golden_suite
from torchnative.testing import upstream

pytestmark = pytest.mark.skipif(not upstream.available(), reason="upstream torch env missing")


def _samples():
    import torch

    x = torch.tensor([1.5, -0.0, float("inf"), float("nan"), 1e-40, -3.25])
    z = torch.complex(torch.arange(6.0), -torch.arange(6.0)).reshape(2, 3)
    return {
        "float32_specials": x,
        "float64_transposed": torch.arange(12, dtype=torch.float64).reshape(3, 4).t(),
        "float16": x.half(),
        "bfloat16": x.bfloat16(),
        "complex_conj_view": z.conj(),
        "int64_large": torch.tensor([2**62 + 1, -(2**53) - 1]),
        "bool": torch.tensor([True, False, True]),
        "zero_size": torch.empty(0, 3),
    }


def test_encoding_keeps_every_bit_and_the_layout():
    """Inline, bits and side table each give back the values (bits: every bit, NaN's sign
    included), with dtype, shape and stride recorded."""
    import torch

    for name, t in _samples().items():
        want = t.resolve_conj()
        ref = want.float() if t.dtype in (torch.float16, torch.bfloat16) else want
        for mode in ("inline", "bits", "table"):
            arrays = {} if mode == "table" else None
            enc = prelude.encode(t, arrays, bits=mode == "bits")
            assert (enc["dtype"], enc["shape"], enc["stride"]) == \
                (str(t.dtype).split(".")[1], list(t.shape), list(t.stride())), (name, mode)
            got = prelude.decode(enc, arrays)
            np.testing.assert_array_equal(got, ref.numpy(), err_msg=f"{name} {mode}")
        if t.dtype.is_floating_point and t.dtype != torch.bfloat16:
            raw = prelude.decode(prelude.encode(t, bits=True)).astype(ref.numpy().dtype)
            assert raw.tobytes() == np.ascontiguousarray(ref.numpy()).tobytes(), name
    # a Python value records its type: True is not 1, and NaN equals NaN
    assert prelude.encode(True) != prelude.encode(1)
    assert prelude.encode(float("nan")) == prelude.encode(float("nan"))


SNIPPET = """
mk = Maker("shared inputs", False)
t = mk.randn(3, 4)
print(json.dumps({"inline": encode([t, t.t(), mk.randint(0, 9, (5,))]), "bits": encode(t, bits=True),
                  "error": probe("torch.ones(2) + torch.ones(3)", globals())}))
"""


def test_both_sides_run_the_same_prelude():
    """The prelude loads on upstream under the guard (it imports no torchnative), and the seeded
    inputs and their encodings come out the same on both sides."""
    ours, theirs = sides.on_both(SNIPPET)
    assert ours == theirs
    assert theirs["error"]["error"] == "RuntimeError"


# --------------------------------------------------------------------------- a planted kernel
@pytest.fixture
def plant(monkeypatch):
    """plant(scale, where): ours' hypot kernel multiplies its result's elements at ``where`` by
    ``scale``; the true kernel is restored (and the door's resolution forgotten) afterwards."""
    from torchnative.csrc.ops import dispatcher, kernel_registry

    op = dispatcher.find_or_throw("aten::hypot")
    true = kernel_registry.KERNELS["hypot"]

    def planted(scale, where):
        def wrong(*args, **kwargs):
            out = true(*args, **kwargs)
            bad = out.clone()
            bad.view(-1)[where] = bad.view(-1)[where] * scale
            return bad

        monkeypatch.setitem(kernel_registry.KERNELS, "hypot", wrong)
        op.forget()

    yield planted
    monkeypatch.undo()
    op.forget()


AGREEMENT = """
rng = np.random.default_rng(5)
case("hypot", torch.hypot, rng.standard_normal(40), rng.standard_normal(40))
"""
EXACT = "torch.hypot(torch.tensor([3., 5., 8.]), torch.tensor([4., 12., 15.]))"


@pytest.fixture(scope="module")
def theirs():
    return sides.on_upstream(AGREEMENT + f"print(json.dumps({{'values': RESULTS, "
                             f"'exact': probe({EXACT!r}, globals())}}))\n")


def _ours_agreement():
    prelude.RESULTS.clear()
    sides.here(AGREEMENT)
    return dict(prelude.RESULTS)


def test_exact_records_catch_one_ulp(plant, theirs):
    ns = sides.here("")
    assert prelude.probe(EXACT, ns) == theirs["exact"]
    plant(np.float32(1) + np.finfo(np.float32).eps, 2)  # 17 -> the next float32
    assert prelude.probe(EXACT, ns) != theirs["exact"]


def test_derived_tolerance_catches_a_wrong_element(plant, theirs):
    up = theirs["values"]
    assert agreement(_ours_agreement(), up, "hypot.float32") is None
    plant(1 + 1e-4, 7)
    assert agreement(_ours_agreement(), up, "hypot.float32") is not None


def test_snippet_cases_catch_a_wrong_element(plant, tmp_path_factory):
    cases = [("hypot_planted", "planted", "a = mk.randn(4, 5)\nb = mk.randn(4, 5)",
              "T.hypot(a, b)", ())]
    g = Golden(cases)
    golden = g.run_upstream(tmp_path_factory, "planted")
    up = golden[0]["hypot_planted"]

    def judge():
        ours, arrays = g.ours(cases[0])
        g.compare(golden, "planted", up["low"], ours, arrays, up["high"], up.get("others", ()))

    judge()
    plant(1 + 1e-4, 11)
    with pytest.raises(AssertionError):
        judge()


def test_a_suite_refuses_a_case_that_tests_nothing_it_claims(tmp_path_factory):
    """With an errors family, an error case that computes on upstream and a value case that
    raises there both fail (either would pass against ours without testing what it says); the
    same cases in their right families pass."""
    cases = [("raises_as_value", "values", "a = mk.randn(2, 3)", "T.mm(a, a)", []),
             ("computes_as_error", "errors", "a = mk.randn(2, 3)", "T.mm(a, a.t())", [])]
    harness, _fixture, test = golden_suite(cases, "claims", errors_family="errors")
    golden = harness.run_upstream(tmp_path_factory, "claims")
    for case_ in cases:
        with pytest.raises(AssertionError, match="on upstream"):
            test(golden, case_)
    right = [(name, "values" if fam == "errors" else "errors", *rest)
             for name, fam, *rest in cases]
    for case_ in right:
        test(golden, case_)
