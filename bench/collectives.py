"""all_reduce, all_gather and broadcast bandwidth, ours vs upstream's gloo, in one run.

Usage: .venv/bin/python bench/collectives.py [--worlds 2 4] [--sizes 1K 64K 1M 16M 64M]
       [--iters N] [--rounds R]

For each world size, the same worker program runs as real processes on upstream torch and on
ours (env:// rendezvous on 127.0.0.1), alternating sides. Each rank times each call; a call's
time is its slowest rank's (a broadcast's root is done long before the last rank has the data),
and the figure is the median over calls; bandwidth is the message size over that time
("algorithm bandwidth"). Ratios are ours/upstream
(higher is better for bandwidth). With ``--rounds R`` each side runs R times, alternating, and
keeps its fastest median per operation and size: on a shared machine the other sessions' load
then costs both sides alike instead of whichever ran during a burst.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

WORKER = r'''
import json, os, sys, time
import numpy as np
import torch
import torch.distributed as dist
dist.init_process_group("gloo", init_method="env://")
rank = dist.get_rank()
sizes = [int(s) for s in sys.argv[1].split(",")]
iters = int(sys.argv[2])
out = {}
for nbytes in sizes:
    n = max(1, nbytes // 4)
    x = torch.from_numpy(np.ones(n, np.float32))
    outs = [torch.empty(n) for _ in range(dist.get_world_size())]
    for name, call in (("all_reduce", lambda: dist.all_reduce(x)),
                       ("all_gather", lambda: dist.all_gather(outs, x)),
                       ("broadcast", lambda: dist.broadcast(x, 0))):
        k = iters if nbytes <= (1 << 20) else max(4, iters // 2)  # a median of 2 is noise
        call()
        times = []
        for _ in range(k):
            dist.barrier()
            t = time.perf_counter()
            call()
            times.append(time.perf_counter() - t)
        out[f"{name}:{nbytes}"] = times
every = [None] * dist.get_world_size()
dist.all_gather_object(every, out)
if rank == 0:
    print(json.dumps({key: float(np.median(np.max([e[key] for e in every], axis=0)))
                      for key in out}))
dist.destroy_process_group()
'''


def _port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(side: str, world: int, sizes, iters: int) -> dict:
    from torchnative.testing.upstream import UPSTREAM_PYTHON, upstream_env

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(WORKER)
    if side == "ours":
        exe, env = sys.executable, dict(os.environ, PYTHONPATH=str(REPO / "src"))
    else:
        exe, env = str(UPSTREAM_PYTHON), upstream_env()
    port = _port()
    procs = []
    for r in range(world):
        e = dict(env, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r),
                 WORLD_SIZE=str(world), OMP_NUM_THREADS="1")
        procs.append(subprocess.Popen([exe, f.name, ",".join(map(str, sizes)), str(iters)],
                                      env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate(timeout=1800) for p in procs]
    os.unlink(f.name)
    for p, (_, err) in zip(procs, outs):
        if p.returncode:
            raise RuntimeError(f"{side} world {world} failed:\n{err[-2000:]}")
    return json.loads(outs[0][0].strip().splitlines()[-1])


def parse_size(s: str) -> int:
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(float(s[:-1]) * mult[s[-1].upper()]) if s[-1].upper() in mult else int(s)


def human(n: int) -> str:
    for unit, m in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= m:
            return f"{n // m}{unit}"
    return str(n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--worlds", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--sizes", nargs="+", default=["1K", "64K", "1M", "16M", "64M"])
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=1)
    a = ap.parse_args()
    sizes = [parse_size(s) for s in a.sizes]
    print("op          world   size   upstream MB/s     ours MB/s   ratio")
    for world in a.worlds:
        up, ours = {}, {}
        for _ in range(a.rounds):
            for side, best in (("upstream", up), ("ours", ours)):
                for key, t in run(side, world, sizes, a.iters).items():
                    best[key] = min(t, best.get(key, t))
        for key in up:
            op, nbytes = key.split(":")
            bu, bo = int(nbytes) / up[key] / 1e6, int(nbytes) / ours[key] / 1e6
            print(f"{op:<12}{world:>5}{human(int(nbytes)):>7}{bu:>16.1f}{bo:>14.1f}{bo / bu:>8.2f}")


if __name__ == "__main__":
    main()
