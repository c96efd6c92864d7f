"""Rendezvous through the init method given as argv[1]; all-reduce the ranks + 1."""

import os
import sys

import torch
import torch.distributed as dist

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dist.init_process_group("gloo", init_method=sys.argv[1], rank=rank, world_size=world)
x = torch.tensor([float(rank + 1)])
dist.all_reduce(x)
print("sum", x.item())
dist.destroy_process_group()
