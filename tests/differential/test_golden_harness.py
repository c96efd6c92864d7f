"""The golden harness: it tests itself, it can fail, and it holds ours to the agreeing baseline.

(a) the self-test passes; (b) a comparator made to accept everything (or to reject everything) is
caught by it; (c) the ratchet: the fast subset replayed on ours keeps every row listed in
tests/golden_baseline.json agreeing, no unlisted row diverges and the pinned totals hold;
(d) upstream replayed against itself agrees on every case (the harness adds no disagreement);
(e) the comparison interpreter is upstream: ours posing as it is stopped in every way the
harness starts it.
"""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
import textwrap
import types

import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import baseline, compare, pipeline, report, selftest, workers
from torchnative.testing.golden.subsets import SUITES

FAST = SUITES["fast"]


# ---------------------------------------------------------------------------------------------- (a), (b)

def test_self_test_passes():
    assert selftest.run() == []


def test_self_test_cli_exit_code():
    proc = subprocess.run([sys.executable, "-m", "torchnative.testing.golden", "self-test"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "self-test passed" in proc.stdout


@pytest.mark.parametrize("name", sorted(compare.COMPARATORS))
def test_accept_everything_comparator_is_caught(name, monkeypatch):
    monkeypatch.setitem(compare.COMPARATORS, name, lambda *args, **kwargs: None)
    problems = selftest.run()
    assert any(f"'{name}'" in p or p.endswith(f": {name}") for p in problems), problems


@pytest.mark.parametrize("name", ["close", "exact", "tie", "exception"])
def test_reject_everything_comparator_is_caught(name, monkeypatch):
    monkeypatch.setitem(compare.COMPARATORS, name, lambda *args, **kwargs: "rejects everything")
    assert any(p.startswith("control rejected") for p in selftest.run())


def test_ratchet_flags_a_regressed_row(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"agrees": ["add|function|torch.add", "sum|function|torch.sum"]}))
    rows = [{"id": "add|function|torch.add", "status": "agrees", "first_problem": ""},
            {"id": "sum|function|torch.sum", "status": "diverges", "first_problem": "close: 3/4 elements off"}]
    assert baseline.check({"rows": rows}, path) == ["sum|function|torch.sum: diverges: close: 3/4 elements off"]
    rows[1]["status"] = "errors-as-upstream"
    assert baseline.check({"rows": rows[1:]}, path)[0].startswith("add|function|torch.add: not in this run")


def test_cpu_dependent_rows_may_move_only_by_an_ulp(tmp_path):
    """A row listed as CPU-dependent may diverge by float64-ulp-level values and nothing else."""
    path = tmp_path / "baseline.json"
    rid = "log_softmax|function|torch.log_softmax"
    path.write_text(json.dumps({"agrees": [rid], "cpu_dependent": {rid: "why"}}))
    def row(status, problem):
        return {"rows": [{"id": rid, "status": status, "first_problem": problem}]}
    ok = "close: 1/25 elements off (max |diff| 2.15e-16, rtol 8.88e-16, atol 8.9e-308; first at flat 18"
    assert baseline.check(row("diverges", ok), path) == []
    assert baseline.check(row("diverges", ok.replace("2.15e-16", "3e-12")), path)
    assert baseline.check(row("diverges", "nonfinite: NaN differs at 1 positions"), path)
    assert baseline.check(row("refuses", "aten::log_softmax"), path)


def test_ratchet_flags_a_new_or_worse_divergence_and_fallen_totals(tmp_path):
    """A diverging row the baseline does not know fails; a known row may improve, not worsen
    (status, or the comparator that flags it first); the pinned totals may not fall."""
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps({"agrees": [], "known": {
        "sum|function|torch.sum": "diverges: close: 1/4 elements off",
        "mm|function|torch.mm": "refuses: aten::mm"}, "totals": {"samples_agreeing": 10}}))
    def rep(rows, agreeing=10):
        return {"rows": [{"id": i, "status": s, "first_problem": p} for i, s, p in rows],
                "totals": {"samples_agreeing": agreeing}}
    same = [("sum|function|torch.sum", "diverges", "close: 2/4 elements off"),
            ("mm|function|torch.mm", "refuses", "aten::mm")]
    assert baseline.check(rep(same), path) == []
    better = [("sum|function|torch.sum", "agrees", ""), ("mm|function|torch.mm", "diverges", "close: x")]
    assert baseline.check(rep(better[:1]), path) == []
    assert "was refuses, now diverges" in baseline.check(rep(better[1:]), path)[0]
    other = [("sum|function|torch.sum", "diverges", "nonfinite: NaN differs at 1 positions")]
    assert "first problem was close" in baseline.check(rep(other), path)[0]
    new = [("add|function|torch.add", "diverges", "close: 1/4 elements off")]
    assert "not a known row" in baseline.check(rep(new), path)[0]
    assert baseline.check(rep(same, agreeing=9), path) == [
        "totals: samples_agreeing 9, the baseline pins 10"]


def test_baseline_file_is_well_formed():
    doc = baseline.load()
    assert doc["suite"] == "fast" and isinstance(doc["agrees"], list)
    assert set(doc["totals"]) == set(baseline.PINNED_TOTALS) and doc["totals"]["samples_agreeing"] > 0
    assert not set(doc["known"]) & set(doc["agrees"])
    keys = {r.split("|")[0].split(".")[0] for r in doc["agrees"]}
    assert keys <= {op.split(".")[0] for op in FAST.ops}, "baseline rows outside the fast suite"


# ---------------------------------------------------------------------------------------------- (c), (d)

def test_a_slow_call_is_retried_without_its_timer():
    """The per-call timer cannot turn a slow case into a divergence: a call it stops runs again
    untimed, and its result is the call's own."""
    import torch

    from torchnative.testing.golden import calls, codec

    call = {"fn": "time.sleep", "args": [{"T": "float", "v": 0.3}], "kwargs": {}}
    res = calls.run_call(call, {}, torch, codec.Store("r"), seed=0, timeout=0.05)
    assert res["ok"] and res["untimed_retry"], res
    fast = calls.run_call(call, {}, torch, codec.Store("r"), seed=0, timeout=30)
    assert fast["ok"] and "untimed_retry" not in fast


def _ours_import_error() -> str | None:
    """Why ``import torch`` fails in ours' interpreter, or None when it works."""
    python = upstream.ours_python()
    proc = subprocess.run([python, "-c", "import torch"], capture_output=True, text=True, timeout=600,
                          env=workers.worker_env(python))
    return None if proc.returncode == 0 else (proc.stderr.strip().splitlines() or ["?"])[-1]


def _replay_and_report(python: str, label: str) -> dict:
    # two workers, as the sweep's command line runs them: each key is its own computation
    pipeline.generate(FAST, jobs=2)
    try:
        pipeline.replay(FAST, python, label, jobs=2)
        return report.build(FAST, label, pipeline.judge_all(FAST, label))
    finally:
        import shutil
        shutil.rmtree(pipeline.results_dir(FAST, label), ignore_errors=True)


@pytest.mark.golden
def test_fast_subset_on_ours_keeps_baseline():
    why = _ours_import_error()
    if why is not None:
        upstream.missing(f"`import torch` fails in ours' interpreter ({upstream.ours_python()}): {why}")
    rep = _replay_and_report(upstream.ours_python(), f"pytest-ours-{os.getpid()}")
    t = rep["totals"]
    print(f"fast subset on ours: samples agreeing {t['samples_agreeing']}/{t['samples_attempted']}; cases {t['cases']}")
    crashed = [c for c in rep["cases"] if "no result" in c.get("failures", {}).get("outcome", "")]
    assert not crashed, f"{len(crashed)} cases got no result from ours' worker, e.g. {crashed[0]}"
    assert baseline.check(rep) == []


@pytest.mark.golden
def test_fast_subset_upstream_against_itself_agrees():
    if not upstream.available():
        upstream.missing(f"upstream interpreter missing: {upstream.UPSTREAM_PYTHON} (tools/setup.sh)")
    rep = _replay_and_report(str(upstream.UPSTREAM_PYTHON), f"pytest-upstream-{os.getpid()}")
    bad = [c for c in rep["cases"] if c["status"] not in report.GOOD]
    assert rep["totals"]["samples_attempted"] > 500
    assert not bad, f"{len(bad)} cases disagree with upstream itself, e.g. {bad[:3]}"


@pytest.mark.golden
def test_layout_survives_the_trip():
    """Non-contiguous, offset, broadcast (stride 0) and bfloat16 inputs are rebuilt exactly."""
    code = textwrap.dedent("""
        import json, torch
        from golden import codec
        base = torch.arange(60, dtype=torch.float32).reshape(5, 12)
        values = [base[1:, 2:9:3].t(), torch.randn(3, 1).expand(3, 4), torch.randn(4, 3).bfloat16().t(),
                  torch.empty(0, 3)[:, 1:], torch.tensor(-0.0)]
        store, ok = codec.Store(), []
        for t in values:
            back = codec.decode(codec.encode(t, store, torch, storage=True), store.arrays, torch)
            ok.append([back.stride() == t.stride(), back.storage_offset() == t.storage_offset(),
                       back.dtype == t.dtype, bool(torch.equal(back, t)),
                       torch.signbit(back).tolist() == torch.signbit(t).tolist()])
        print(json.dumps(ok))
    """)
    proc = subprocess.run(upstream.code_command(code), capture_output=True, text=True,
                          env=workers.worker_env(upstream.UPSTREAM_PYTHON), timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    checks = json.loads(proc.stdout.strip().splitlines()[-1])
    assert checks == [[True] * 5] * 5, checks


def test_cpu_profile_spread_bounds_the_allowance():
    """Upstream's result under another CPU profile widens the allowance by as much as upstream
    moved on this output, and no more; with no other profile nothing is widened."""
    import numpy as np

    from torchnative.testing.golden.tolerance import floor

    u = np.array([1.0, 2.0, 3.0, 4.0], np.float32).astype(np.float64)
    other = u.copy()
    other[1] += 1e-5  # upstream on another CPU moved element 1
    tol, refs = floor("float32"), {"other0": other}
    near = u.copy()
    near[2] += 0.9e-5
    assert compare.close(u, near, None, compare.spread(u, refs, "float32"), tol) is None
    assert compare.close(u, near, None, compare.spread(u, {}, "float32"), tol)
    too_far = u.copy()
    too_far[1] += 2e-5
    assert compare.close(u, too_far, None, compare.spread(u, refs, "float32"), tol)


def test_other_cpu_profiles_exclude_the_capability_in_force():
    """The profiles rerun are this CPU's capabilities other than the one in force; the capability
    ours reproduces is the one upstream reports, here and under each profile."""
    from torchnative.csrc.platform import cpu_capability as cap

    probe = "import json, torch; print(json.dumps(torch.backends.cpu.get_cpu_capability()))"
    others = upstream.other_cpu_profiles()
    assert cap.CAPABILITY not in others
    assert upstream.run_json(probe) == cap.CAPABILITY
    for name, env in others.items():
        assert upstream.run_json(probe, env=env) == name


def test_under_other_profiles_runs_each_profile_over_the_base_env():
    """One call per other profile, the profile's variables over the caller's environment (which
    they override), and each reaches upstream under that profile."""
    probe = ("import json, os, torch; print(json.dumps([torch.backends.cpu.get_cpu_capability(), "
             "os.environ.get('TN_BASE')]))")
    base = {**upstream.upstream_env(), "TN_BASE": "kept", "ATEN_CPU_CAPABILITY": "not-a-profile"}
    calls = upstream.under_other_profiles(lambda env: upstream.run_json(probe, env=env), base)
    assert len(calls) == len(upstream.other_cpu_profiles())
    got = upstream.concurrently(*calls)
    assert got == [[name, "kept"] for name in upstream.other_cpu_profiles()]


# ---------------------------------------------------------------------------------------------- (e)

_POSING = "try:\n    import torch\nexcept BaseException:\n    pass\nprint('compared')\n"


def test_the_guard_stops_ours_posing_as_upstream(tmp_path):
    """Every way the harness starts the comparison interpreter (code, script, module: run_json,
    run_script, the golden workers) stops at ``import torch`` when that torch's ``_C`` is not a
    compiled extension (a stand-in package first on the path; and ours itself), and a program's
    own ``except`` cannot swallow it; upstream's own runs go through."""
    script = tmp_path / "posing.py"
    script.write_text(_POSING)
    fake = tmp_path / "fake"
    (fake / "torch").mkdir(parents=True)
    (fake / "torch" / "__init__.py").write_text("from . import _C\n")
    (fake / "torch" / "_C.py").write_text("")
    real = {**upstream.upstream_env(), "PYTHONPATH": str(tmp_path)}
    posing = {**upstream.upstream_env(), "PYTHONPATH": os.pathsep.join([str(fake), str(tmp_path)])}
    launchers = (lambda **k: upstream.code_command(_POSING, **k), lambda **k: upstream.script_command(script, **k),
                 lambda **k: upstream.module_command("posing", **k))
    stopped = [(launch(), posing) for launch in launchers] + [
        (upstream.code_command(_POSING, python=upstream.ours_python()), real)]
    for argv, env in stopped:
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode == upstream.GUARD_EXIT, (argv[3:], proc.stderr[-2000:])
        assert "compared" not in proc.stdout and "not a compiled extension module" in proc.stderr
    for launch in launchers:
        proc = subprocess.run(launch(), capture_output=True, text=True, env=real, timeout=600)
        assert proc.returncode == 0 and "compared" in proc.stdout, proc.stderr[-2000:]
    ours = upstream.ours_python()
    assert workers.command(ours, "replay")[:2] == [ours, "-m"]  # ours' own replay is not guarded
    assert workers.command(upstream.UPSTREAM_PYTHON, "generate") == upstream.module_command("golden.generate")


def test_a_session_against_ours_posing_as_upstream_stops_before_any_test(tmp_path):
    """The whole suite, its comparison interpreter pointed at our environment, stops loudly at
    the start (tests/differential/conftest.py), and so does one with that interpreter missing."""
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    conftest = upstream.REPO / "tests" / "conftest.py"
    (tmp_path / "conftest.py").write_text(conftest.read_text())
    for python, says in ((upstream.ours_python(), "is not upstream torch"),
                         (str(tmp_path / "no-python"), "upstream interpreter missing")):
        env = {**os.environ, "TORCHNATIVE_UPSTREAM_PYTHON": python}
        env.pop(upstream.ALLOW_MISSING, None)
        proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                              capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
        assert proc.returncode != 0 and says in proc.stdout + proc.stderr, proc.stdout[-2000:]
        assert "1 passed" not in proc.stdout


# ---------------------------------------------------------------------------------------------- regenerated samples

REGEN_KEYS = ("mT", "nn.functional.triplet_margin_with_distance_loss")  # only a lambda; a module argument


def test_input_digest_sees_every_bit_and_the_layout():
    """The digest that decides whether ours' regenerated inputs are upstream's: one flipped bit,
    another stride or offset, another non-tensor argument each change it; a copy does not."""
    import torch

    from torchnative.testing.golden import live

    def SampleInput(input, args, kwargs):  # OpInfo's shape of a sample (its module needs op_db's imports)
        return types.SimpleNamespace(input=input, args=args, kwargs=kwargs)

    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    d = live.digest(SampleInput(x, args=(1,), kwargs={"f": torch.abs}), torch)
    assert live.digest(SampleInput(x.clone(), args=(1,), kwargs={"f": torch.abs}), torch) == d
    flipped = x.clone()
    flipped.view(torch.int32)[1, 2] ^= 1
    variants = [SampleInput(flipped, args=(1,), kwargs={"f": torch.abs}),
                SampleInput(x.t().contiguous().t(), args=(1,), kwargs={"f": torch.abs}),
                SampleInput(torch.arange(-1, 12, dtype=torch.float32)[1:].reshape(3, 4), args=(1,), kwargs={"f": torch.abs}),
                SampleInput(x, args=(2,), kwargs={"f": torch.abs}),
                SampleInput(x, args=(1,), kwargs={"f": torch.neg})]
    assert all(torch.equal(v.input, x) for v in variants[1:3])  # same values, other layout
    assert len({live.digest(v, torch) for v in variants} | {d}) == len(variants) + 1


@pytest.fixture(scope="module")
def regen_run(tmp_path_factory):
    """Entries whose samples cannot travel, generated on upstream and replayed by upstream posing
    as ours (one process each), with one sample duplicated so that ours regenerates other inputs."""
    if not upstream.available():
        upstream.missing(f"upstream interpreter missing: {upstream.UPSTREAM_PYTHON} (tools/setup.sh)")
    from torchnative.testing.golden.subsets import Suite

    root = tmp_path_factory.mktemp("regen")
    suite = Suite("regen-test", REGEN_KEYS, ("float32",), max_samples=3)
    old, pipeline.CACHE = pipeline.CACHE, root
    try:
        cases = pipeline.cases_dir(suite)
        code, err = workers.run(upstream.UPSTREAM_PYTHON, "generate", [
            "--out", str(cases), "--dtypes", "float32", "--max-samples", "3", *REGEN_KEYS], timeout=600)
        assert code == 0, err
        doc = json.loads((cases / "mT.json").read_text())
        size = lambda s: math.prod(s["args"][0]["shape"])  # a sample with values (not an empty one)
        good = max(doc["samples"], key=size)
        assert size(good) > 1
        # OpInfo's generators reseed themselves, so another seed may give the same inputs: another
        # index of the same generator stands for inputs that came out differently on ours
        bad = dict(good, id="s_other_seed", index=next(s["index"] for s in doc["samples"] if s is not good))
        doc["samples"].append(bad)
        doc["cases"] += [dict(c, id=f"{c['id']}_other_seed", sample=bad["id"])
                         for c in doc["cases"] if c["sample"] == good["id"]]
        (cases / "mT.json").write_text(json.dumps(doc))
        (cases / "_manifest.json").write_text(json.dumps({
            "fingerprint": "test", "suite": suite.params(), "keys": list(REGEN_KEYS), "failures": {},
            "upstream_python": str(upstream.UPSTREAM_PYTHON), "seconds": 0, "created": "test"}))
        label = "upstream-self"
        out = pipeline.results_dir(suite, label)
        code, err = workers.run(upstream.UPSTREAM_PYTHON, "replay",
                                ["--cases", str(cases), "--out", str(out), *REGEN_KEYS], timeout=600)
        assert code == 0, err
        (out / "_run.json").write_text(json.dumps({"python": str(upstream.UPSTREAM_PYTHON), "label": label,
                                                   "seconds": 0, "crashed": {}}))
        yield suite, label
    finally:
        pipeline.CACHE = old


@pytest.mark.golden
def test_regenerated_samples_are_judged_and_other_inputs_are_not(regen_run):
    suite, label = regen_run
    rep = report.build(suite, label, pipeline.judge_all(suite, label))
    by_status = {}
    for c in rep["cases"]:
        by_status.setdefault(c["status"], []).append(c)
    differ = by_status.pop("inputs-differ", [])
    assert differ and all(c["sample"] == "s_other_seed" for c in differ)
    assert set(by_status) <= set(report.GOOD), {s: v[:2] for s, v in by_status.items()}
    paths = rep["totals"]["attempted_by_path"]
    assert paths.get("no nameable spelling", 0) >= 3 and paths.get("unserializable input: PairwiseDistance", 0) >= 3
    assert rep["totals"]["not_attempted"].get("inputs-differ") == 1  # reported, never judged
    assert rep["totals"]["samples_attempted"] == rep["totals"]["samples_agreeing"] == sum(paths.values())


@pytest.mark.golden
def test_a_wrong_result_on_a_regenerated_sample_is_caught(regen_run):
    """What judges a regenerated sample is the comparators: a wrong value there diverges."""
    import numpy as np

    suite, label = regen_run
    out = pipeline.results_dir(suite, label)
    key = REGEN_KEYS[1]
    saved = (out / f"{key}.npz").read_bytes()
    try:
        doc, arrays = pipeline.load_pair(out, key)
        first = next(r for r in doc["results"].values() if r.get("ok") and r["value"]["T"] == "tensor")
        arrays[first["value"]["data"]] = arrays[first["value"]["data"]] * np.float32(1.001) + np.float32(1e-3)
        np.savez(out / f"{key}.npz", **arrays)
        rep = report.build(suite, label, pipeline.judge_all(suite, label))
        bad = [c for c in rep["cases"] if c["status"] == "diverges"]
        assert len(bad) == 1 and bad[0]["key"] == key and "close" in bad[0]["failures"], bad
    finally:
        (out / f"{key}.npz").write_bytes(saved)


@pytest.mark.golden
def test_ours_regenerates_opinfo_samples():
    python = upstream.ours_python()
    proc = subprocess.run([python, "-c", "import torch\nfrom golden import live\nprint(live.Regenerator(torch).op('mT').name)"],
                          capture_output=True, text=True, timeout=600, env=workers.worker_env(python))
    assert proc.returncode == 0 and proc.stdout.strip() == "mT", proc.stderr[-1500:]
