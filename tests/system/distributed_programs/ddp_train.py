"""DistributedDataParallel training, run unchanged on upstream torch and on ours.

A small MLP (with BatchNorm, whose buffers DDP broadcasts, in the "buffers" variant; with a
branch used only on even steps in the "unused" variant, for find_unused_parameters); weights and per-rank data come from numpy with fixed seeds. Steps
cover plain synchronized steps, a no_sync() accumulation step, and a registered communication
hook. Prints one JSON line: losses per step and the final parameters and buffers.
"""

import gc
import json
import os
import sys

import numpy as np
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

variant = sys.argv[1]
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
dist.init_process_group("gloo", init_method="env://")


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(6, 8)
        # BatchNorm's buffers make DDP broadcast buffers every forward
        self.bn = torch.nn.BatchNorm1d(8) if variant == "buffers" else torch.nn.Identity()
        self.fc2 = torch.nn.Linear(8, 3)
        if variant == "unused":
            self.side = torch.nn.Linear(8, 3)  # used on even steps only

    def forward(self, x, step):
        h = torch.relu(self.bn(self.fc1(x)))
        out = self.fc2(h)
        if variant == "unused" and step % 2 == 0:
            out = out + self.side(h)
        return out


DTYPE = getattr(torch, os.environ.get("TN_DTYPE", "float32"))  # float64: upstream's reference
model = Net().to(DTYPE)
local = None
g = np.random.default_rng(0)  # the same initial weights on every rank and on both torches
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(g.standard_normal(tuple(p.shape)) * 0.3).to(DTYPE))
import copy  # noqa: E402

local = copy.deepcopy(model)  # a control: the same steps without DDP (no averaging)
local_opt = torch.optim.SGD(local.parameters(), lr=0.1, momentum=0.9)
ddp = DDP(model, find_unused_parameters=(variant == "unused"))
if variant == "hook":
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    ddp.register_comm_hook(None, default_hooks.allreduce_hook)
opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
data = np.random.default_rng(100 + rank)
losses = []
for step in range(5):
    x = torch.from_numpy(data.standard_normal((4, 6))).to(DTYPE)
    y = torch.from_numpy(data.integers(0, 3, 4))
    opt.zero_grad()
    if variant == "no_sync" and step == 1:
        with ddp.no_sync():  # accumulate locally, synchronize on the next backward
            torch.nn.functional.cross_entropy(ddp(x, step), y).backward()
        x2 = torch.from_numpy(data.standard_normal((4, 6))).to(DTYPE)
        loss = torch.nn.functional.cross_entropy(ddp(x2, step), y)
    else:
        loss = torch.nn.functional.cross_entropy(ddp(x, step), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
    local_opt.zero_grad()
    torch.nn.functional.cross_entropy(local(x, step), y).backward()
    local_opt.step()
state = {k: v.detach().double().reshape(-1).tolist() for k, v in model.state_dict().items()}
local_state = {k: v.detach().double().reshape(-1).tolist() for k, v in local.state_dict().items()}
out = {"losses": losses, "state": state, "local_state": local_state}
if variant == "buffers":
    # one more forward in eval mode (BatchNorm does not update its statistics) with grad enabled:
    # DDP broadcasts rank 0's buffers first, so every rank ends with rank 0's
    ddp.eval()
    ddp(torch.zeros(2, 6, dtype=DTYPE), 0)
    out["synced_buffers"] = {k: v.double().reshape(-1).tolist() for k, v in model.named_buffers()}
print(json.dumps(out))
# DDP's reducer sits in reference cycles; left to the interpreter's finalization, upstream's gloo
# threads outlive it and about one run in twenty aborts ("terminate called without an active
# exception") after printing. Collected here, while the group is alive, it never did (0 of 160).
del ddp, opt
gc.collect()
dist.destroy_process_group()
