"""Worker, run in ours' interpreter: stored cases -> ours' results, one file per OpInfo entry.

    python -m golden.replay --cases DIR --out DIR KEY [KEY ...]

Each case is rebuilt from its descriptors and called exactly as on upstream (same spelling, same
seed). Every case survives its own exceptions (``calls.run_call``); a whole entry that fails is
recorded as such, and the result file of an entry is written as soon as it is done, so a crash
loses at most the entry in progress (the driver then retries it alone).

A "regen" sample is regenerated here from OpInfo under upstream's seed (live.py); its cases run
only if the inputs' digest matches upstream's, else they are recorded as "inputs differ" (or the
generator's own failure) and never judged.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
import warnings
from pathlib import Path

import numpy as np

from . import calls, codec, live


def interpreter_info(torch) -> dict:
    return {"python": sys.executable, "torch": getattr(torch, "__version__", "?"),
            "torch_file": getattr(torch, "__file__", "?"),
            "torch_C": getattr(torch._C, "__file__", "?"),
            "dispatch_log": calls.dispatch_log(torch) is not None}


def replay_op(key: str, cases_dir: Path, torch, timeout: float) -> tuple[dict, codec.Store]:
    doc = json.loads((cases_dir / f"{key}.json").read_text())
    with np.load(cases_dir / f"{key}.npz") as z:
        arrays = {k: z[k] for k in z.files}
    samples = {s["id"]: s for s in doc["samples"]}
    store = codec.Store("r")
    results = {}
    regen = live.Regenerator(torch)
    found: dict[str, tuple] = {}  # sample id -> (live sample or None, why it is not judged)
    for case in doc["cases"]:
        sample = samples[case["sample"]]
        call = {"fn": case["fn"], "variant": case["variant"], "args": sample["args"],
                "kwargs": sample["kwargs"]}
        if "out" in case:
            call["out"] = case["out"]
        s = fn = None
        if sample.get("regen"):
            if sample["id"] not in found:
                found[sample["id"]] = regenerate(regen, key, sample, torch)
            s, unjudged = found[sample["id"]]
            if unjudged is not None:
                results[case["id"]] = {"ok": False, "unjudged": unjudged}
                continue
            if case["fn"].startswith(live.OPINFO):
                fn = regen.callable(key, case["fn"])
        results[case["id"]] = calls.run_call(call, arrays, torch, store, seed=sample["seed"], timeout=timeout,
                                             live_args=None if s is None else live.parts(s), fn=fn)
    return {"key": key, "results": results}, store


def regenerate(regen: live.Regenerator, key: str, sample: dict, torch) -> tuple:
    """(ours' live sample, None) when its inputs are upstream's bit for bit, else (None, why)."""
    try:
        s = regen.sample(key, sample["dtype"], sample["gen_seed"], sample["index"])
        mine = live.digest(s, torch)
    except Exception as exc:
        return None, {"status": "unregenerated", **calls.describe_exception(exc, "regenerate")}
    if mine != sample["digest"]:
        return None, {"status": "inputs-differ", "message": f"input digest {mine}, upstream's {sample['digest']}"}
    return s, None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cases", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--timeout", type=float, default=20.0)
    ap.add_argument("keys", nargs="+")
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    a.out.mkdir(parents=True, exist_ok=True)
    try:
        import torch
    except BaseException as exc:  # ours cannot import: every entry is recorded as failing to start
        info = {"import_error": calls.describe_exception(exc, "import"),
                "traceback": traceback.format_exc()[-2000:]}
        (a.out / "_interpreter.json").write_text(json.dumps(info))
        for key in a.keys:
            (a.out / f"{key}.json").write_text(json.dumps({"key": key, "import_error": info["import_error"]}))
        return
    try:
        torch.set_num_threads(1)
    except Exception:
        pass
    (a.out / "_interpreter.json").write_text(json.dumps(interpreter_info(torch)))
    for key in a.keys:
        start = time.perf_counter()
        try:
            doc, store = replay_op(key, a.cases, torch, a.timeout)
        except Exception as exc:
            doc, store = {"key": key, "op_error": calls.describe_exception(exc, "replay")}, codec.Store("r")
        doc["seconds"] = round(time.perf_counter() - start, 3)
        store.save(a.out / f"{key}.npz")
        (a.out / f"{key}.json").write_text(json.dumps(doc))  # written last: its presence means done
        print(f"{key}: {doc['seconds']}s", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
