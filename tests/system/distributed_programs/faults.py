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
elif mode == "dies_mid_broadcast":  # rank 1, second in the chain, dies once data reaches it
    n = 16 << 20  # 64 MiB of float32: many chunks still to come when the first lands
    x = torch.ones(n) if rank == 0 else torch.zeros(n)
    if rank == 1:
        work = dist.broadcast(x, 0, async_op=True)
        deadline = time.monotonic() + 60
        while x[0].item() == 0 and time.monotonic() < deadline:
            time.sleep(0.0005)
        print(f"DYING first={x[0].item()} last={x[-1].item()}", flush=True)
        os._exit(3)
    report(lambda: dist.broadcast(x, 0))
    print(f"RESULT all-ones {bool((x == 1).all())} 0", flush=True)
    report(lambda: dist.all_reduce(torch.ones(1)))
    # survivors stay until all have reported: one exiting must not be what wakes the others
    store = dist.distributed_c10d._get_default_store()
    store.add("reported", 1)
    while store.add("reported", 0) < world - 1:
        time.sleep(0.05)
elif mode == "mismatch":  # three mismatches in a row; each must fail on every rank, then recover
    report(lambda: dist.all_reduce(torch.ones(4 + (rank == 0))))
    report(lambda: dist.all_reduce(torch.ones(4, dtype=torch.float64 if rank == 0 else torch.float32)))
    report(lambda: dist.broadcast(torch.ones(3), src=rank % 2))
    x = torch.ones(2)
    dist.all_reduce(x)
    print(f"RESULT ok-after {x.sum().item()}", flush=True)
os._exit(0)
