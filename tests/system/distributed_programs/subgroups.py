"""Subgroups made three ways — ``new_subgroups``, ``new_subgroups_by_enumeration`` and
``split_group`` — each reduced over, run unchanged on upstream torch and on ours. Prints one JSON
line: per way, this rank's group rank, group size and the all_reduce result."""

import json
import os

import torch
import torch.distributed as dist

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
# no bound device: upstream refuses split_group then (and a cpu device_id is refused too:
# "must be an accelerator with an index"), so on CPU its refusal is what must agree
dist.init_process_group("gloo", init_method="env://")
out = {}


def record(name, fn):
    try:
        group = fn()
        if group is None:
            out[name] = None
            return
        x = torch.tensor([float(rank + 1), 10.0 ** rank])
        dist.all_reduce(x, group=group)
        out[name] = [dist.get_rank(group), dist.get_world_size(group), x.tolist(),
                     dist.get_process_group_ranks(group)]
    except Exception as e:  # the error type is the result
        out[name] = [type(e).__name__, str(e).splitlines()[0][:200]]


half = max(world // 2, 1)
record("new_subgroups", lambda: dist.new_subgroups(group_size=half)[0])
pairs = [list(range(0, world, 2)), list(range(1, world, 2))] if world > 1 else [[0]]
record("by_enumeration", lambda: dist.new_subgroups_by_enumeration(pairs)[0])
record("split_group", lambda: dist.split_group(split_ranks=pairs))
record("new_group_subset", lambda: dist.new_group([0, world - 1]) if rank in (0, world - 1) else None)
dist.barrier()
print(json.dumps(out))
dist.destroy_process_group()
