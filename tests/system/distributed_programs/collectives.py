"""Every collective of torch.distributed on fixed inputs; each rank saves its results (.npz).

Runs unchanged on upstream torch and on ours (env:// rendezvous from the launcher). Inputs come
from numpy (seeded per rank), so both sides compute on identical data. An operation that raises
records its error type instead of a value, so refusals and upstream's own errors compare too.
"""

import os
import sys
import traceback

import numpy as np
import torch
import torch.distributed as dist

rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
out_dir = sys.argv[1]
dist.init_process_group("gloo", init_method="env://")
assert dist.get_rank() == rank and dist.get_world_size() == world
results: dict[str, np.ndarray] = {}


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from inputs import all_reduce_cases  # noqa: E402
from inputs import data as _data  # noqa: E402


def data(salt, shape, dtype):
    return _data(salt, shape, dtype, rank)


def T(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def save(name, value):
    if isinstance(value, torch.Tensor):
        if value.dtype == torch.bfloat16:
            value = value.float()
        value = value.numpy()
    results[name] = np.asarray(value)


def attempt(name, fn):
    try:
        fn()
    except Exception as e:  # the error type is the result
        save(name + ".error", np.array(type(e).__name__))
        if os.environ.get("TN_DEBUG"):
            traceback.print_exc()


for name, salt, shape, dtype, op in all_reduce_cases():
    def run(name=name, salt=salt, shape=shape, dtype=dtype, op=op):
        x = T(data(salt, shape, dtype))
        dist.all_reduce(x, op=getattr(dist.ReduceOp, op))
        save(name, x)

    attempt(name, run)

x = T(data(90, (6,), np.float32)).to(torch.bfloat16)
dist.all_reduce(x)
save("all_reduce.bfloat16", x)
x = torch.complex(T(data(91, (4,), np.float32)), T(data(92, (4,), np.float32)))
dist.all_reduce(x)
save("all_reduce.complex64", torch.view_as_real(x))
x = T(data(93, (3, 4), np.float32)).t()  # not contiguous
attempt("all_reduce.noncontiguous", lambda: (dist.all_reduce(x), save("all_reduce.noncontiguous", x)))

x = T(data(1, (4, 3), np.float64))
dist.broadcast(x, src=world - 1)
save("broadcast", x)
# the pipelined chain: several chunks with a ragged last one, from a root whose chain wraps
# round; and a mid-sized message (one direct round) into a non-contiguous tensor
x = T(data(94, (1_310_723,), np.float32))
dist.broadcast(x, src=1 % world)
save("broadcast.large", x)
x = T(data(95, (300, 257), np.float64)).t()
dist.broadcast(x, src=world - 1)
save("broadcast.mid_noncontiguous", x)
x = T(data(2, (5,), np.int64))
dist.reduce(x, dst=1 % world, op=dist.ReduceOp.SUM)
save("reduce.dst", x) if rank == 1 % world else None
outs = [torch.empty(3, 2) for _ in range(world)]
dist.all_gather(outs, T(data(3, (3, 2), np.float32)))
save("all_gather", torch.stack(outs))
out = torch.empty(world * 4, dtype=torch.int32)
dist.all_gather_into_tensor(out, T(data(4, (4,), np.int32)))
save("all_gather_into_tensor", out)
g = [torch.empty(2, 2) for _ in range(world)] if rank == 0 else None
dist.gather(T(data(5, (2, 2), np.float32)), gather_list=g, dst=0)
save("gather", torch.stack(g)) if rank == 0 else None
o = torch.empty(3, dtype=torch.int64)
dist.scatter(o, [T(data(6 + i, (3,), np.int64)) for i in range(world)] if rank == 0 else None, src=0)
save("scatter", o)
o = torch.empty(4)
dist.reduce_scatter(o, [T(data(20 + i, (4,), np.float32)) for i in range(world)])
save("reduce_scatter", o)
o = torch.empty(2, dtype=torch.int64)
dist.reduce_scatter_tensor(o, T(data(30, (2 * world,), np.int64)), op=dist.ReduceOp.MAX)
save("reduce_scatter_tensor.MAX", o)
outs = [torch.empty(2, dtype=torch.int64) for _ in range(world)]
dist.all_to_all(outs, [T(data(40 + i, (2,), np.int64)) for i in range(world)])
save("all_to_all", torch.stack(outs))
in_splits = [(rank + j) % 3 + 1 for j in range(world)]          # uneven splits
out_splits = [(j + rank) % 3 + 1 for j in range(world)]
inp = T(data(50, (sum(in_splits), 2), np.float32))
o = torch.empty(sum(out_splits), 2)
dist.all_to_all_single(o, inp, out_splits, in_splits)
save("all_to_all_single.uneven", o)

# async: Work.wait / is_completed / get_future
x = T(data(60, (3,), np.float32))
w = dist.all_reduce(x, async_op=True)
fut_value = w.get_future().wait()
save("async.wait", np.array(w.wait()))
save("async.is_completed", np.array(w.is_completed()))
save("async.future", fut_value[0])

# point to point: a ring of send/recv, isend/irecv, and batch_isend_irecv
right, left = (rank + 1) % world, (rank - 1) % world
r = torch.empty(3)
if rank % 2 == 0:
    dist.send(T(data(70, (3,), np.float32)), right)
    dist.recv(r, left)
else:
    dist.recv(r, left)
    dist.send(T(data(70, (3,), np.float32)), right)
save("send_recv", r)
r2 = torch.empty(2, dtype=torch.int64)
reqs = [dist.isend(T(data(71, (2,), np.int64)), right), dist.irecv(r2, left)]
for q in reqs:
    q.wait()
save("isend_irecv", r2)
r3 = torch.empty(4)
ops = [dist.P2POp(dist.isend, T(data(72, (4,), np.float32)), right),
       dist.P2POp(dist.irecv, r3, left)]
for q in dist.batch_isend_irecv(ops):
    q.wait()
save("batch_isend_irecv", r3)

# subgroups
sub = dist.new_group([0, world - 1])
x = T(data(80, (3,), np.int64))
if rank in (0, world - 1):
    dist.all_reduce(x, group=sub)
    save("new_group.all_reduce", x)
evens = dist.new_group([r for r in range(world) if r % 2 == 0])
if rank % 2 == 0:
    x = T(data(81, (2,), np.float64))
    dist.all_reduce(x, group=evens, op=dist.ReduceOp.MAX)
    save("new_group.evens.MAX", x)

dist.barrier()
dist.monitored_barrier()
save("barrier", np.array(True))

# object collectives (they unpickle what peers send)
objs = [None] * world
attempt("all_gather_object", lambda: (dist.all_gather_object(objs, {"rank": rank, "x": [rank] * 2}),
                                      save("all_gather_object", np.array(repr(objs)))))
lst = [f"from{rank}", rank]
attempt("broadcast_object_list", lambda: (dist.broadcast_object_list(lst, src=0),
                                          save("broadcast_object_list", np.array(repr(lst)))))

gathered = [None] * world if rank == world - 1 else None
attempt("gather_object", lambda: (dist.gather_object({"r": rank, "t": (rank, "x" * rank)}, gathered,
                                                     dst=world - 1),
                                  save("gather_object", np.array(repr(gathered)))))
scattered = [None]
attempt("scatter_object_list", lambda: (
    dist.scatter_object_list(scattered, [{"to": r, "n": 10 * r + 1} for r in range(world)]
                             if rank == 0 else None, src=0),
    save("scatter_object_list", np.array(repr(scattered)))))


def _point_to_point_objects():
    # rank 0 sends its list to the last rank, which sends one back of its own
    box = [None, None]
    last = world - 1
    if rank == 0:
        dist.send_object_list([("zero", 1.5), b"\x00\xff"], dst=last)
        dist.recv_object_list(box, src=last)
    elif rank == last:
        dist.recv_object_list(box, src=0)
        dist.send_object_list([{"last": last}, list(range(last))], dst=0)
    save("send_recv_object_list", np.array(repr(box)))


attempt("send_recv_object_list", _point_to_point_objects)
big = [np.arange(200_000, dtype=np.int64) * (rank + 1)] if rank == 1 % world else [None]
attempt("broadcast_object_list.large", lambda: (
    dist.broadcast_object_list(big, src=1 % world),
    save("broadcast_object_list.large", np.array(int(np.asarray(big[0]).sum())))))

np.savez(os.path.join(out_dir, f"rank{rank}.npz"), **results)
dist.destroy_process_group()
print("done", rank)
