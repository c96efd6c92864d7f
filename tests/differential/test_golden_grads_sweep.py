"""The uncapped gradient sweep's bookkeeping: a resumed replay keeps only results of the same cases,
and the full suite takes every sample (gradcheck on the first float64 ones)."""

from __future__ import annotations

import json

from torchnative.testing.golden import grads, pipeline, workers


def _fake_replay(monkeypatch, calls):
    def run_keys(python, module, args, keys, done, **kw):
        calls.append((module, list(args[:1]), list(keys)))
        out = args[args.index("--out") + 1]
        for k in keys:
            (pipeline.Path(out) / f"{k}.json").write_text(json.dumps({"key": k, "results": {}}))
        return {}
    monkeypatch.setattr(workers, "run_keys", run_keys)


def _cases(tmp_path, monkeypatch, fingerprint):
    monkeypatch.setattr(pipeline, "CACHE", tmp_path)
    suite = grads.GradSuite("resume-test", ("abs", "mm"))
    cases = pipeline.cases_dir(suite)
    cases.mkdir(parents=True, exist_ok=True)
    for k in ("abs", "mm"):
        (cases / f"{k}.json").write_text("{}")
    (cases / "_manifest.json").write_text(json.dumps({"fingerprint": fingerprint, "keys": ["abs", "mm"]}))
    return suite


def test_resume_keeps_results_of_the_same_cases_only(tmp_path, monkeypatch):
    calls = []
    _fake_replay(monkeypatch, calls)
    suite = _cases(tmp_path, monkeypatch, "aaaa")
    grads.replay(suite, "ours-python", "ours")
    assert calls[-1] == ("grads_worker", ["replay"], ["abs", "mm"])
    grads.replay(suite, "ours-python", "ours", resume=True)  # same cases: nothing to redo
    assert calls[-1][2] == []
    suite = _cases(tmp_path, monkeypatch, "bbbb")  # the cases were regenerated
    grads.replay(suite, "ours-python", "ours", resume=True)
    assert calls[-1][2] == ["abs", "mm"]
    stamp = json.loads((pipeline.results_dir(suite, "ours") / "_run.json").read_text())
    assert stamp["cases"] == "bbbb" and stamp["kept"] == 0


def test_full_suite_is_uncapped():
    full = grads.SUITES["full"]
    assert full.max_samples == 0 and full.checks >= 1 and not full.ops
    assert "live.py" in grads.GradSuite.SOURCES and "replay.py" in grads.GradSuite.SOURCES
