"""Where a SmolLM2 prefill forward's time goes, ours per kernel and upstream per operator.

Usage: .venv/bin/python bench/profile_prefill.py [--tokens 128 512] [--repeats 3] [--top 30]

Ours (this process): every kernel the door resolved, timed exclusively (CPU time; a kernel that
calls other operators does not count their time), summed over ``--repeats`` forwards after a
warm-up forward, per forward. Upstream (``.venv-upstream/bin/python`` started by this script):
``torch.profiler``'s self CPU time per operator over the same forwards. Both with one thread and
in inference mode. (The profiler's times are wall time, so a loaded machine inflates upstream's
column: compare its operators with one another, and the forwards' CPU times above the tables.)
The table joins the two by operator name without its overload (upstream's
profiler names no overload); an operator upstream decomposes differently shows on its own row.
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _kernel_timing import kernels_timed  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _model():
    import torch

    sys.path.insert(0, str(REPO / "src"))  # the model loader
    from torchnative.apps.chat import load

    torch.set_num_threads(1)
    return load(None, None, quiet=True, dtype=torch.float32)[1]


def _ids(n):
    import torch

    return torch.arange(n).remainder(1000).add(10).reshape(1, n)


def _forward_ms(model, ids, repeats) -> float:
    """CPU ms per forward after a warm-up forward."""
    model(ids)
    c = time.process_time()
    for _ in range(repeats):
        model(ids)
    return (time.process_time() - c) / repeats * 1e3


def ours(tokens, repeats):
    """{tokens: {"forward": CPU ms, "ops": {name: [ms per forward, calls per forward]}}}"""
    import torch

    model, out = _model(), {}
    for n in tokens:
        ids = _ids(n)
        with torch.inference_mode():
            forward = _forward_ms(model, ids, repeats)
            with kernels_timed() as (excl, calls):
                for _ in range(repeats):
                    model(ids)
        out[n] = {"forward": forward,
                  "ops": {k: [v / repeats * 1e3, calls[k] / repeats] for k, v in excl.items()}}
    return out


def upstream(tokens, repeats):
    import torch
    from torch.profiler import ProfilerActivity, profile

    model, out = _model(), {}
    for n in tokens:
        ids = _ids(n)
        with torch.inference_mode():
            forward = _forward_ms(model, ids, repeats)
            with profile(activities=[ProfilerActivity.CPU]) as prof:
                for _ in range(repeats):
                    model(ids)
        ops = {e.key: [e.self_cpu_time_total / repeats / 1e3, e.count / repeats]
               for e in prof.key_averages()}
        out[n] = {"forward": forward, "ops": ops}
    return out


def _base(name):
    return name.split(".")[0] if name.startswith("aten::") else name


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, nargs="+", default=[128, 512])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--side", choices=("both", "ours", "upstream"), default="both")
    args = ap.parse_args()
    if args.side != "both":
        fn = ours if args.side == "ours" else upstream
        print(json.dumps(fn(args.tokens, args.repeats)))
        return
    up = subprocess.run([str(REPO / ".venv-upstream/bin/python"), __file__, "--side", "upstream",
                         "--repeats", str(args.repeats), "--tokens", *map(str, args.tokens)],
                        check=True, capture_output=True, text=True).stdout
    up = {int(k): v for k, v in json.loads(up.strip().splitlines()[-1]).items()}
    mine = ours(args.tokens, args.repeats)
    for n in args.tokens:
        a, b = mine[n], up[n]
        print(f"\nprefill {n}: ours {a['forward']:.1f} CPU ms per forward, upstream "
              f"{b['forward']:.1f} (ours {b['forward'] / a['forward']:.2f}x upstream's speed)")
        rows = collections.defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
        for name, (ms, k) in a["ops"].items():
            r = rows[_base(name)]
            r[0] += ms
            r[1] += k
        for name, (ms, k) in b["ops"].items():
            if name.startswith("aten::"):
                r = rows[name]
                r[2] += ms
                r[3] += k
        print(f"kernels: ours {sum(r[0] for r in rows.values()):.1f} ms (exclusive), upstream "
              f"operators {sum(r[2] for r in rows.values()):.1f} ms (self)")
        print("| operator | ours ms | ours calls | upstream ms | upstream calls | gap ms |\n"
              "|---|---|---|---|---|---|")
        order = sorted(rows.items(), key=lambda kv: -abs(kv[1][0] - kv[1][2]))
        for name, (m, k, u, j) in order[:args.top]:
            print(f"| {name} | {m:.2f} | {k:.0f} | {u:.2f} | {j:.0f} | {m - u:+.2f} |")


if __name__ == "__main__":
    main()
