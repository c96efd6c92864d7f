"""The digits-C benchmark: error per method and setting, adaptation memory and time per batch.

Settings (digits_c.stream): ``reset`` reverts the delta between corruptions; ``continual`` adapts
through all corruptions without reverting; ``mixed`` shuffles all corruptions together;
``label`` sorts each corruption's samples by label (non-i.i.d.). Methods run with their reference
defaults (method docstrings); the source model is trained on clean digits (digits_models).
"""

from __future__ import annotations

import time

import numpy as np
import torch

from . import EATA, ETA, LAME, MEMO, SAR, TTT, CoTTA, NormStats, RoTTA, Tent, wrap
from . import digits_c as dc, digits_models as dm
from ..delta import deepcopy_nbytes

SETTINGS = ("reset", "continual", "mixed", "label")


def _clean_batches(n=2, size=64):
    xt, _, _, _ = dc.load_digits_split()
    return [torch.from_numpy(xt[i * size:(i + 1) * size].copy()) for i in range(n)]


FACTORIES = {
    "source": None,
    "norm": lambda: NormStats(),
    "norm_single": lambda: NormStats(alpha=1 / 17),  # Schneider et al.'s prior N = 16
    "tent": lambda: Tent(),
    "eta": lambda: ETA(),
    "eata": lambda: EATA(fisher_data=_clean_batches()),
    "sar": lambda: SAR(),
    "cotta": lambda: CoTTA(),
    "rotta": lambda: RoTTA(),
    "lame": lambda: LAME(),
    "memo": lambda: MEMO(),
    "ttt": lambda: TTT(),            # online; its source model has the jointly trained rotation head
    "ttt_reset": lambda: TTT(online=False),
    "ttt_lr0": lambda: TTT(lr=0),    # the jointly trained twin's own error: nothing moves
}
NEEDS_TTT_MODEL = ("ttt", "ttt_reset", "ttt_lr0")


def register(name, factory):
    FACTORIES[name] = factory


def run(method: str, setting: str, *, arch="bn", severity=5, batch_size=64, corruptions=None,
        per_domain=None, weights=None, progress=None, seed=0) -> dict:
    """One cell of the table: error (%) and costs of ``method`` on ``setting``. torch's default
    generator is seeded first (``seed``): CoTTA's, MEMO's and RoTTA's augmentations and CoTTA's
    stochastic restore draw from it, and every process starts it from a seed of its own."""
    if method not in FACTORIES:
        raise ValueError(f"unknown method {method!r}; choose from {', '.join(FACTORIES)}")
    torch.manual_seed(seed)
    corruptions = tuple(corruptions or dc.CORRUPTIONS)
    _, _, xe, ye = dc.load_digits_split()
    if per_domain:
        xe, ye = xe[:per_domain], ye[:per_domain]
    model = dm.source_model(arch, weights, ttt=method in NEEDS_TTT_MODEL)
    wrapped = None
    if FACTORIES[method] is not None:
        wrapped = wrap(model, method=FACTORIES[method]())
    wrong = total = batches = 0
    spent = 0.0
    last = None
    peak = 0
    for xb, yb, dom in dc.stream(xe, ye, setting, corruptions, severity, batch_size):
        if wrapped is not None and setting == "reset" and last is not None and dom != last:
            wrapped.revert()
        last = dom
        x = torch.from_numpy(xb.copy())
        t0 = time.perf_counter()
        if wrapped is None:
            with torch.no_grad():
                out = model(x)
        else:
            out = wrapped(x)
        spent += time.perf_counter() - t0
        wrong += int((out.argmax(1).numpy() != yb).sum())
        total += len(yb)
        batches += 1
        if wrapped is not None:
            peak = max(peak, wrapped.delta.nbytes)
        if progress:
            progress(len(yb))
    return {"method": method, "setting": setting, "arch": arch, "severity": severity,
            "batch_size": batch_size, "error": 100.0 * wrong / total, "samples": total,
            "ms_per_batch": 1000.0 * spent / batches, "delta_bytes": peak,
            "deepcopy_bytes": deepcopy_nbytes(model),
            "skipped": wrapped.skipped if wrapped else 0, "resets": wrapped.resets if wrapped else 0}


def table(rows: list[dict], keys=("error",)) -> str:
    """Markdown: one row per method, one column per setting."""
    settings = list(dict.fromkeys(r["setting"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    cell = {(r["method"], r["setting"]): r for r in rows}
    head = "| method | " + " | ".join(settings) + " | delta bytes | ms/batch |"
    lines = [head, "|" + "---|" * (len(settings) + 3)]
    for m in methods:
        rs = [cell.get((m, s)) for s in settings]
        errs = " | ".join(f"{r['error']:.1f}" if r else "" for r in rs)
        any_r = next(r for r in rs if r)
        ms = np.mean([r["ms_per_batch"] for r in rs if r])
        lines.append(f"| {m} | {errs} | {any_r['delta_bytes']:,} | {ms:.1f} |")
    return "\n".join(lines)


def main_cli(args) -> int:
    """``torchnative adapt``: the table for the chosen methods and settings, with a progress bar."""
    import sys

    from tqdm import tqdm

    methods = args.methods.split(",")
    settings = args.settings.split(",")
    corruptions = args.corruptions.split(",") if args.corruptions else list(dc.CORRUPTIONS)
    for m in methods:
        if m not in FACTORIES:
            raise ValueError(f"unknown method {m!r}; choose from {', '.join(FACTORIES)}")
    for s in settings:
        if s not in SETTINGS:
            raise ValueError(f"unknown setting {s!r}; choose from {', '.join(SETTINGS)}")
    for c in corruptions:
        if c not in dc.CORRUPTIONS:
            raise ValueError(f"unknown corruption {c!r}; choose from {', '.join(dc.CORRUPTIONS)}")
    if args.severity not in (1, 2, 3, 4, 5):
        raise ValueError(f"--severity must be 1..5, got {args.severity}")
    if args.batch_size < 1:
        raise ValueError(f"--batch-size must be at least 1, got {args.batch_size}")
    per = args.per_domain or 597
    total = len(methods) * len(settings) * len(corruptions) * min(per, 597)
    rows = []
    with tqdm(total=total, unit="img", file=sys.stderr, disable=args.quiet) as bar:
        for s in settings:
            for m in methods:
                bar.set_description(f"{m}/{s}")
                rows.append(run(m, s, arch=args.arch, severity=args.severity,
                                batch_size=args.batch_size, corruptions=corruptions,
                                per_domain=args.per_domain, progress=bar.update))
    print(f"digits-C, {args.arch} source model, severity {args.severity}, batch size "
          f"{args.batch_size}, {len(corruptions)} corruption(s), error (%):")
    print(table(rows))
    if args.json:
        import json
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0
