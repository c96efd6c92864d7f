"""The driver: generate on upstream, replay on ours, judge every case. Imports no torch."""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import sys
import time
from pathlib import Path

import numpy as np

from torchnative.testing import upstream

from . import compare, workers
from .subsets import Suite
from .tolerance import OpTolerances

CACHE = upstream.REPO / ".cache" / "golden"
HERE = Path(__file__).resolve().parent
# Files whose change changes the cases (the fingerprint of a case set).
GENERATE_SECONDS_PER_KEY = 300
REPLAY_SECONDS_PER_KEY = 300  # a per-call alarm (calls.py) bounds each case; this bounds the rest


def suite_dir(suite: Suite) -> Path:
    return CACHE / f"{suite.CACHE_PREFIX}{suite.name}"


def cases_dir(suite: Suite) -> Path:
    return suite_dir(suite) / "cases"


def results_dir(suite: Suite, label: str) -> Path:
    return suite_dir(suite) / "results" / label


def fingerprint(suite: Suite) -> str:
    h = hashlib.sha256(json.dumps(suite.params(), sort_keys=True).encode())
    for name in suite.SOURCES:
        h.update((HERE / name).read_bytes())
    h.update(str(upstream.UPSTREAM_PYTHON).encode())
    return h.hexdigest()[:16]


def load_pair(directory: Path, key: str) -> tuple[dict, dict]:
    doc = json.loads((directory / f"{key}.json").read_text())
    npz = directory / f"{key}.npz"
    arrays = {}
    if npz.exists():
        with np.load(npz) as z:
            arrays = {k: z[k] for k in z.files}
    return doc, arrays


def manifest(suite: Suite) -> dict:
    return json.loads((cases_dir(suite) / "_manifest.json").read_text())


def generate(suite: Suite, *, force: bool = False, jobs: int = 1, log=sys.stderr, shard: str | None = None,
             profiles: bool = True) -> Path:
    """Cases of ``suite`` under .cache/golden/<suite>/cases (reused while the fingerprint holds).
    ``profiles=False`` skips upstream's reruns under the other CPU profiles: verdicts are then
    stricter (no cross-CPU allowance), never laxer."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{suite.name}.lock", "w") as lock:  # concurrent runs share the cache
        fcntl.flock(lock, fcntl.LOCK_EX)
        out = _generate(suite, force, jobs, log, shard)
        if profiles:
            keys = [k for k in manifest(suite)["keys"] if (out / f"{k}.json").exists()]
            replay_profiles(suite, "replay", ["--cases", str(out)], keys, per_key=REPLAY_SECONDS_PER_KEY,
                            jobs=jobs, log=log)
        return out


def shard_of(keys: list[str], shard: str | None) -> list[str]:
    """``K/N``: the K-th of N interleaved parts of ``keys`` (a run split across invocations)."""
    if not shard:
        return keys
    k, n = (int(x) for x in shard.split("/"))
    if not 0 <= k < n:
        raise ValueError(f"--shard {shard}: want K/N with 0 <= K < N")
    return keys[k::n]


def _generate(suite: Suite, force: bool, jobs: int, log, shard: str | None = None, *,
              worker: tuple[str, list[str]] | None = None, list_keys=workers.list_keys, chunk: int = 20) -> Path:
    """``worker``: (module, leading arguments) making the cases, and ``list_keys`` their entries
    (the gradient sweep's); default the forward sweep's."""
    out = cases_dir(suite)
    path, progress = out / "_manifest.json", out / "_progress.json"
    fp = fingerprint(suite)
    if not force and path.exists() and json.loads(path.read_text()).get("fingerprint") == fp \
            and json.loads(path.read_text()).get("complete", True) and not shard:
        print(f"[golden] reusing cases in {out}", file=log)
        return out
    if not upstream.available():
        raise RuntimeError(f"upstream interpreter missing: {upstream.UPSTREAM_PYTHON} (run tools/setup.sh)")
    # an interrupted or sharded run of the same cases resumes: entries already written are kept
    resume = not force and progress.exists() and json.loads(progress.read_text()).get("fingerprint") == fp
    if not resume:
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        progress.write_text(json.dumps({"fingerprint": fp, "seconds": 0.0}))
    start = time.time()
    keys = list_keys(suite.ops)
    todo = [k for k in shard_of(keys, shard) if not (out / f"{k}.json").exists()]
    module, lead = worker or ("generate", ["--dtypes", ",".join(suite.dtypes), "--max-dtypes",
                                           str(suite.max_dtypes), "--max-samples", str(suite.max_samples),
                                           "--seed", str(suite.seed)])
    failures = workers.run_keys(upstream.UPSTREAM_PYTHON, module, [*lead, "--out", str(out)], todo,
                                lambda k: (out / f"{k}.json").exists(), chunk=chunk,
                                per_key=GENERATE_SECONDS_PER_KEY, jobs=jobs, log=log)
    state = json.loads(progress.read_text())
    state["seconds"] = round(state["seconds"] + time.time() - start, 1)
    state["failures"] = {**state.get("failures", {}), **failures}
    progress.write_text(json.dumps(state))
    # after a shard, the manifest lists the entries generated so far ("complete": false): replay
    # and report then cover those, and say so
    done = [k for k in keys if (out / f"{k}.json").exists() or k in state["failures"]]
    path.write_text(json.dumps({
        "fingerprint": fp, "suite": suite.params(), "keys": done, "failures": state["failures"],
        "complete": len(done) == len(keys), "entries_selected": len(keys),
        "upstream_python": str(upstream.UPSTREAM_PYTHON), "seconds": state["seconds"],
        "created": time.strftime("%Y-%m-%d %H:%M:%S")}, indent=1))
    return out


PROFILE_LABEL = "upstream-{}"


def replay_profiles(suite, module: str, args: list[str], keys: list[str], *, per_key: float,
                    jobs: int = 1, log=sys.stderr) -> None:
    """Upstream's results for every case again, under each of this machine's other CPU profiles
    (``upstream.other_cpu_profiles``): where they move, upstream disagrees with itself across
    CPUs, and ``compare.spread`` lets ours move as far. Kept while the cases' fingerprint holds."""
    fp = json.loads((cases_dir(suite) / "_manifest.json").read_text())["fingerprint"]
    for name, env in upstream.other_cpu_profiles().items():
        out = results_dir(suite, PROFILE_LABEL.format(name))
        stamp = out / "_run.json"
        if stamp.exists() and json.loads(stamp.read_text()).get("fingerprint") == fp:
            if set(json.loads(stamp.read_text()).get("keys", keys)) >= set(keys):
                continue
        else:
            shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True, exist_ok=True)
        todo = [k for k in keys if not (out / f"{k}.json").exists()]  # a partial sweep grows
        failures = workers.run_keys(upstream.UPSTREAM_PYTHON, module, [*args, "--out", str(out)], todo,
                                    lambda k, out=out: (out / f"{k}.json").exists(), chunk=40,
                                    per_key=per_key, jobs=jobs, log=log, env=env)
        done = sorted(p.stem for p in out.glob("*.json") if not p.name.startswith("_"))
        stamp.write_text(json.dumps({"fingerprint": fp, "profile": name, "env": env, "crashed": failures,
                                     "keys": done}))


def profile_results(suite, key: str) -> list[tuple[dict, dict]]:
    """(record, arrays) of upstream's results for entry ``key`` under the other CPU profiles."""
    found = []
    for name in upstream.other_cpu_profiles():
        d = results_dir(suite, PROFILE_LABEL.format(name))
        if (d / f"{key}.json").exists():
            found.append(load_pair(d, key))
    return found


def replay(suite: Suite, python: str, label: str, *, jobs: int = 1, log=sys.stderr, resume: bool = False,
           worker: tuple[str, list[str]] = ("replay", []), keys: list[str] | None = None) -> Path:
    """Ours' results for every case of ``suite`` (or ``keys``) under .cache/golden/<suite>/results/<label>.
    ``resume`` keeps the entries an earlier replay of the same cases finished (a sharded sweep
    grows), except those with a sample ours could not regenerate, and the crashed ones. ``worker``:
    (module, leading arguments) replaying them (the gradient sweep's)."""
    src, out = cases_dir(suite), results_dir(suite, label)
    stamp = out / "_run.json"
    earlier = json.loads(stamp.read_text()) if resume and stamp.exists() else None
    fp = manifest(suite)["fingerprint"]
    if earlier is not None and earlier.get("cases", fp) != fp:  # results of other cases: start over
        earlier = None
    if earlier is None:
        shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    start = time.time()
    keys = [k for k in (keys or manifest(suite)["keys"]) if (src / f"{k}.json").exists()]
    kept = [k for k in keys if earlier is not None and finished(out / f"{k}.json")]
    todo = [k for k in keys if k not in kept]
    for k in todo:
        (out / f"{k}.json").unlink(missing_ok=True)
    failures = workers.run_keys(python, worker[0], [*worker[1], "--cases", str(src), "--out", str(out)], todo,
                                lambda k: (out / f"{k}.json").exists(), chunk=40,
                                per_key=REPLAY_SECONDS_PER_KEY, jobs=jobs, log=log)
    for key, why in failures.items():  # a crash is a result too: every case of the entry diverges
        (out / f"{key}.json").write_text(json.dumps({"key": key, "crashed": why}))
    seconds = time.time() - start + (earlier or {}).get("seconds", 0.0)
    stamp.write_text(json.dumps({"python": str(python), "label": label, "cases": fp, "seconds": round(seconds, 1),
                                 "crashed": failures, "replayed": len(todo), "kept": len(kept),
                                 "finished": time.strftime("%Y-%m-%d %H:%M:%S")}))
    return out


def finished(path: Path) -> bool:
    """An entry's result file is final: it exists, did not crash, and ours rebuilt every sample."""
    if not path.exists():
        return False
    doc = json.loads(path.read_text())
    return "crashed" not in doc and not any(
        (r.get("unjudged") or {}).get("status") == "unregenerated" for r in doc.get("results", {}).values())


def judge_all(suite: Suite, label: str):
    """Yield (case-file doc, sample, case, verdict, ours' record) for every stored case."""
    src, res = cases_dir(suite), results_dir(suite, label)
    for key in manifest(suite)["keys"]:
        if not (src / f"{key}.json").exists():
            continue
        doc, arrays = load_pair(src, key)
        if (res / f"{key}.json").exists():
            mine, mine_arrays = load_pair(res, key)
        else:  # a crash leaves a file saying so (replay); no file: the replay has not reached it
            mine, mine_arrays = {"unreplayed": True}, {}
        tol = OpTolerances(doc, arrays)
        others = profile_results(suite, key)
        samples = {s["id"]: s for s in doc["samples"]}
        failed = mine.get("import_error") or mine.get("op_error")
        if failed:  # ours never reached the op: neither a refusal nor any exception upstream could raise
            failed = {"type": f"{failed['type']} before the call", "mro": [], "phase": failed["phase"],
                      "message": f"{failed['phase']} failed: {failed['message']}", "refusal": False}
        for case in doc["cases"]:
            ours = mine.get("results", {}).get(case["id"])
            if ours is None and failed:
                ours = {"ok": False, "exc": failed}
            c = compare.Case(doc, samples[case["sample"]], case, arrays, mine_arrays, tol,
                             compare.other_results(others, case["id"]))
            verdict = unjudged(case, ours, mine.get("unreplayed", False)) or compare.judge(c, ours)
            yield doc, c.sample, case, verdict, ours, tol


# Cases never judged: ours could not rebuild upstream's inputs (live.py), or upstream's own result
# cannot travel (a non-tensor object): neither side's values can be compared; or ours' replay has
# not reached the entry yet (an interrupted or resumed sweep).
UNJUDGED = ("inputs-differ", "unregenerated", "result-unserializable", "unreplayed")
# Types with a single instance: a result of that type on both sides is the same value
# (Tensor.__rsub__ answering NotImplemented), though the codec carries neither.
SINGLETONS = frozenset(("NotImplementedType", "ellipsis"))


def unjudged(case: dict, ours: dict | None, unreplayed: bool = False) -> compare.Verdict | None:
    if unreplayed:
        return compare.Verdict("unreplayed", notes=["ours' replay has not reached this entry"])
    up = case["upstream"]
    if not up["ok"] and up["exc"]["phase"] == "encode":
        if up["exc"]["message"] in SINGLETONS and ours is not None and not ours["ok"] and \
                ours["exc"]["phase"] == "encode" and ours["exc"]["message"] == up["exc"]["message"]:
            return compare.Verdict("agrees", notes=[f"both returned the {up['exc']['message']} singleton"])
        return compare.Verdict("result-unserializable", notes=[up["exc"]["message"][:200]])
    if ours is not None and ours.get("unjudged"):
        why = ours["unjudged"]
        return compare.Verdict(why["status"], notes=[f"{why.get('type', '')}: {why['message'][:200]}".lstrip(": ")])
    return None
