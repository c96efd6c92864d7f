"""Vector norms in upstream's accumulation order: bit-for-bit agreement with upstream.

``norm_order_program.py`` runs on each torch in its own process, under the CPU capability in
force and under ``ATEN_CPU_CAPABILITY=default``: ``linalg.vector_norm`` over rows of many
lengths (ord 2/1/inf/-inf/0/3/-1/0.5), columns, full reductions up to the threaded split,
strided, permuted, sliced and expanded inputs, keepdim, ``dtype=``, float64, bfloat16, float16
and complex64, and what builds on it (``Tensor.norm``, ``F.normalize``, ``cosine_similarity``,
``clip_grad_norm_``'s total norm). Every value is compared by its bytes: no tolerance.

Control: the program also records each row norm the way torchnative computed it before (float64
over |x|, rounded once); upstream's bits must differ from it on many lengths, so the comparison
catches that order.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import order_programs

PROGRAM = Path(__file__).with_name("norm_order_program.py")


def _check(ours, up):
    order_programs.assert_same_bytes(ours, up, "norms")
    got = dict(up["cases"])
    rows = [k[len("control "):] for k in got if k.startswith("control ")]
    caught = {o: sum(1 for k in rows if k.endswith(f"ord={o}") and got[k] != got["control " + k])
              for o in (1, 2)}
    # the old order is visible: upstream's float loops and a float64 sum rounded once disagree
    # on most lengths for both orders
    assert all(c >= len(rows) // 4 for c in caught.values()), (caught, len(rows))


@pytest.mark.parametrize("threads,capability", [(2, None), (1, "default")])
def test_norm_order_matches_upstream(threads, capability):
    _check(*order_programs.run_both(PROGRAM, threads, capability, "quick"))


@pytest.mark.slow
@pytest.mark.parametrize("threads,capability",
                         [(1, None), (2, None), (1, "default"), (2, "default")])
def test_norm_order_sweep(threads, capability):
    _check(*order_programs.run_both(PROGRAM, threads, capability, "slow"))
