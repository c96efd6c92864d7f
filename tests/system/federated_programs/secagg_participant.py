"""One SecAgg+ participant process: trains a small model one step on its own data with torch,
writes its true update (for the test to judge the coordinator's sum), and joins the round.

usage: secagg_participant.py HOST PORT ID OUT.npy [LEAVE_BEFORE_STAGE]
"""

import sys

import numpy as np
import torch

from torchnative.nn.federated.secagg import loopback

host, port, nid, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
leave = sys.argv[5] if len(sys.argv) > 5 else None

torch.manual_seed(nid)
model = torch.nn.Sequential(torch.nn.Linear(12, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
before = [p.detach().clone() for p in model.parameters()]
x, y = torch.randn(32, 12), torch.randint(0, 3, (32,))
opt = torch.optim.SGD(model.parameters(), lr=0.5)
torch.nn.functional.cross_entropy(model(x), y).backward()
opt.step()
update = torch.cat([(p.detach() - b).reshape(-1) for p, b in zip(model.parameters(), before)])
np.save(out, update.numpy().astype(np.float64))
print("torch._C", torch._C.__file__, flush=True)
survivors = loopback.participate(host, port, nid, update.numpy(), weight=1, leave_before=leave)
print("survivors", survivors, flush=True)
