"""Worker, run under upstream torch: how each OpInfo sample would reach ours, without calling it.

    python -m golden.census [--max-samples 24] [--max-dtypes 6] > census.json

Counts, over every entry and the dtypes a sweep selects, the samples a capped sweep leaves out and
why a sample cannot be stored (generate.OpCases.encode_inputs' reasons): the "measure first" table
of docs/agreement.md. Nothing is called, so it takes the time of generating the samples only.
"""

from __future__ import annotations

import argparse
import json
import warnings
from collections import Counter

from . import codec, generate, live, naming


def census(op_db, torch, max_samples: int, max_dtypes: int, seed: int) -> dict:
    rev = naming.reverse_map(torch)
    reasons: Counter = Counter()
    total = 0
    for op in op_db:
        gen = generate.OpCases(op, torch, rev, seed, timeout=None)
        for dtype in generate.pick_dtypes(op, None, max_dtypes):
            try:
                samples = live.generate(op, dtype, live.seed_of(seed, gen.key, dtype), torch)
            except Exception as exc:
                reasons[f"sample_inputs raised {type(exc).__name__}"] += 1
                continue
            total += len(samples)
            picked = {i for i, _ in generate.spread(samples, max_samples)}
            for i, s in enumerate(samples):
                if i not in picked:
                    reasons["beyond the cap"] += 1
                    continue
                why = gen.encode_inputs(s)[2]
                gen.store = codec.Store("a")  # nothing is kept
                reasons[why or "stored"] += 1
    return {"samples": total, "max_samples": max_samples, "reasons": dict(reasons.most_common())}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--max-samples", type=int, default=24)
    ap.add_argument("--max-dtypes", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    import torch
    torch.set_num_threads(1)
    from torch.testing._internal.common_methods_invocations import op_db
    print(json.dumps(census(op_db, torch, a.max_samples, a.max_dtypes, a.seed)))


if __name__ == "__main__":
    main()
