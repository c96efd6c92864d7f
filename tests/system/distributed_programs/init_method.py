"""Rendezvous through the init method given as argv[1]; all-reduce the ranks + 1."""

import os
import sys

import torch
import torch.distributed as dist

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dist.init_process_group("gloo", init_method=sys.argv[1], rank=rank, world_size=world)
x = torch.tensor([float(rank + 1)])
dist.all_reduce(x)
# one write per line: the ranks share the launcher's stdout, and an unbuffered print()
# writes its pieces separately, so two ranks' lines could interleave
sys.stdout.write(f"sum {x.item()}\n")
sys.stdout.flush()
dist.destroy_process_group()
