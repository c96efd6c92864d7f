"""sentence-transformers 6.2 on our torch: the packaged all-MiniLM-L6-v2 encodes and compares
sentences, and (``--slow``) trains one step with each of two of the library's losses, compared
with upstream in its own process."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "ecosystem_programs"))
import compare  # noqa: E402

WATCHED = ["0.model.embeddings.LayerNorm.weight",
           "0.model.encoder.layer.0.attention.self.query.weight",
           "0.model.encoder.layer.5.output.dense.weight"]


runs = compare.runs_fixture("st_minilm", ["encode"])
slow_runs = compare.runs_fixture("st_minilm", ["train"])


def test_encode_and_similarity_agree(runs):
    compare.check(runs, "encode")
    o = runs[0].case("encode")
    assert o["embeddings"].shape == (6, 384)
    # the Normalize module ran: unit embeddings, so cosine similarity equals the dot product
    assert np.allclose(np.linalg.norm(o["embeddings"], axis=1), 1, atol=1e-6)


def test_a_wrong_embedding_is_caught(runs):
    """Control: one embedding element off by 1e-4 (far beyond float32 error, far below what a
    token-level check would notice) is caught."""
    ours, up32, up64 = runs
    got = dict(ours.case("encode"))
    emb = got["embeddings"].copy()
    emb[2, 100] += 1e-4
    got["embeddings"] = emb
    assert "embeddings" in compare.disagreements(got, up32.case("encode"), up64.case("encode"))


@pytest.mark.slow
def test_training_steps_agree(slow_runs):
    compare.check(slow_runs, "train")


@pytest.mark.slow
def test_training_moved_the_weights_and_a_frozen_run_is_caught(slow_runs):
    ours, up32, up64 = slow_runs
    o, u, u64 = ours.case("train"), up32.case("train"), up64.case("train")
    frozen = dict(o)
    for k in WATCHED:
        assert not np.array_equal(o[k], o[f"initial/{k}"])
        frozen[k] = o[f"initial/{k}"]
    assert set(WATCHED) <= set(compare.disagreements(frozen, u, u64))
