"""monitored_barrier with a rank that never arrives, run unchanged on upstream torch and on ours.
The last rank stays away; the others call monitored_barrier(timeout 3 s, wait_all_ranks). Prints
one JSON line: the error type and message this rank saw (None for the absent rank)."""

import json
import os
import time
from datetime import timedelta

import torch.distributed as dist

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dist.init_process_group("gloo", init_method="env://")
dist.barrier()  # everyone is up before the clock starts
result = None
if rank == world - 1:
    time.sleep(8)
else:
    start = time.monotonic()
    try:
        dist.monitored_barrier(timeout=timedelta(seconds=3), wait_all_ranks=True)
        result = ["passed"]
    except Exception as e:
        result = [type(e).__name__, str(e).splitlines()[0][:300], time.monotonic() - start < 30]
print(json.dumps(result), flush=True)
os._exit(0)  # the group is broken by design: leave without a collective shutdown
