"""A digits experiment rank that misbehaves on request (one fault per flag, at a given round).

    --die-at R      SIGKILL itself in round R, after training, before sending
    --late-at R     in round R, hold the update until the coordinator has closed round R
    --nan-at R      send NaN in fc1.bias in round R
    --shape-at R    send fc2.weight with a wrong shape in round R
    --wide          send every update as float64 (twice the bytes: over a tight payload cap)

The remaining arguments are the experiment worker's (torchnative.nn.federated.experiment).
"""

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

import torch

from torchnative.nn.federated import Transform, experiment

ap = argparse.ArgumentParser()
for flag in ("--die-at", "--late-at", "--nan-at", "--shape-at"):
    ap.add_argument(flag, type=int, default=-1)
ap.add_argument("--wide", action="store_true")
faults, rest = ap.parse_known_args()
out = Path(rest[rest.index("--out") + 1])


def closed(round):
    try:
        return any(r["round"] == round for r in json.loads((out / "rounds.json").read_text()))
    except (OSError, ValueError):
        return False


class Faults(Transform):
    def on_send(self, update, ctx):
        r = ctx.round
        if r == faults.die_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if r == faults.late_at:
            end = time.monotonic() + 300
            while not closed(r) and time.monotonic() < end:
                time.sleep(0.05)
        if r == faults.nan_at:
            update = {**update, "0.bias": torch.full_like(update["0.bias"], float("nan"))}
        if r == faults.shape_at:
            update = {**update, "2.weight": torch.zeros(10, 31)}
        if faults.wide:
            update = {n: t.double() for n, t in update.items()}
        return update


sys.exit(experiment.worker(rest, transform=Faults()))
