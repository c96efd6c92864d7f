"""A resumed replay keeps only entries that are final: no crash, every sample rebuilt by ours."""

import json

from torchnative.testing.golden import pipeline


def _write(path, doc):
    path.write_text(json.dumps(doc))
    return path


def test_finished_keeps_a_complete_entry(tmp_path):
    doc = {"key": "abs", "results": {"c0": {"ok": True}, "c1": {"ok": False, "exc": {"type": "RuntimeError"}}}}
    assert pipeline.finished(_write(tmp_path / "abs.json", doc))


def test_finished_redoes_missing_crashed_and_unregenerated(tmp_path):
    assert not pipeline.finished(tmp_path / "absent.json")
    assert not pipeline.finished(_write(tmp_path / "a.json", {"key": "a", "crashed": "timeout"}))
    unregen = {"key": "b", "results": {"c0": {"ok": True},
                                       "c1": {"ok": False, "unjudged": {"status": "unregenerated"}}}}
    assert not pipeline.finished(_write(tmp_path / "b.json", unregen))
    # inputs that differ are a verdict about ours' generator, not a missing piece: kept
    differ = {"key": "c", "results": {"c0": {"ok": False, "unjudged": {"status": "inputs-differ"}}}}
    assert pipeline.finished(_write(tmp_path / "c.json", differ))


def test_an_entry_not_yet_replayed_is_not_judged():
    case = {"upstream": {"ok": True}}
    v = pipeline.unjudged(case, None, unreplayed=True)
    assert v.status == "unreplayed" and v.status in pipeline.UNJUDGED
    # control: a replayed case is left to the comparators
    assert pipeline.unjudged(case, {"ok": True}) is None
