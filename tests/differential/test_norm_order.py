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

import sides
from torchnative.testing import upstream

PROGRAM = Path(__file__).with_name("norm_order_program.py")


def _both(threads: int, capability: str | None, suite: str):
    if not upstream.available():
        upstream.missing("the upstream interpreter")
    env = {"ATEN_CPU_CAPABILITY": capability} if capability else {}
    return sides.script_on_both(PROGRAM, "--threads", str(threads), "--suite", suite, env=env)


def _check(ours, up):
    assert ours["threads"] == up["threads"]
    assert ours["capability"] == up["capability"]
    assert [c[0] for c in ours["cases"]] == [c[0] for c in up["cases"]]
    differ = [(name, o, u) for (name, o), (_, u) in zip(ours["cases"], up["cases"]) if o != u]
    assert not differ, f"{len(differ)} of {len(up['cases'])} norms differ, first: {differ[:5]}"
    got = dict(up["cases"])
    rows = [k[len("control "):] for k in got if k.startswith("control ")]
    caught = {o: sum(1 for k in rows if k.endswith(f"ord={o}") and got[k] != got["control " + k])
              for o in (1, 2)}
    # the old order is visible: upstream's float loops and a float64 sum rounded once disagree
    # on most lengths for both orders
    assert all(c >= len(rows) // 4 for c in caught.values()), (caught, len(rows))


@pytest.mark.parametrize("threads,capability", [(2, None), (1, "default")])
def test_norm_order_matches_upstream(threads, capability):
    _check(*_both(threads, capability, "quick"))


@pytest.mark.slow
@pytest.mark.parametrize("threads,capability",
                         [(1, None), (2, None), (1, "default"), (2, "default")])
def test_norm_order_sweep(threads, capability):
    _check(*_both(threads, capability, "slow"))
