"""Fault scenarios, run as real ranks. Each surviving rank prints one line:
``RESULT <error type name> <seconds>`` (or ``RESULT ok``)."""

import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

mode = sys.argv[1]
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
timeout = timedelta(seconds=float(os.environ.get("TN_TIMEOUT", "6")))


def report(fn):
    start = time.monotonic()
    try:
        fn()
    except Exception as e:
        kinds = ",".join(c.__name__ for c in type(e).__mro__)
        print(f"RESULT {kinds} {time.monotonic() - start:.2f} {str(e)[:300]!r}", flush=True)
        return
    print(f"RESULT ok {time.monotonic() - start:.2f}", flush=True)


if mode == "missing":  # the last rank never starts: the others' rendezvous times out
    report(lambda: dist.init_process_group("gloo", init_method="env://", timeout=timeout))
    os._exit(0)

dist.init_process_group("gloo", init_method="env://", timeout=timeout)
dist.all_reduce(torch.ones(1))  # everyone is connected

if mode == "dead":  # the last rank dies before the collective
    if rank == world - 1:
        os._exit(3)
    report(lambda: dist.all_reduce(torch.ones(1000)))
elif mode == "mismatch":  # three mismatches in a row; each must fail on every rank, then recover
    report(lambda: dist.all_reduce(torch.ones(4 + (rank == 0))))
    report(lambda: dist.all_reduce(torch.ones(4, dtype=torch.float64 if rank == 0 else torch.float32)))
    report(lambda: dist.broadcast(torch.ones(3), src=rank % 2))
    x = torch.ones(2)
    dist.all_reduce(x)
    print(f"RESULT ok-after {x.sum().item()}", flush=True)
os._exit(0)
