"""ProcessGroupGloo: the CPU backend, collectives over a socket mesh (see transport, algorithms).

As upstream's gloo backend, every collective is queued to a worker thread and returns a Work
at once; the queue keeps the calling order, which is what matches collectives across ranks
(each gets the next sequence number as its mailbox slot). Before moving data, every collective
exchanges a short descriptor (operation, dtype, sizes, root) among the ranks that take part, so
a mismatch raises the same clear error on every rank instead of hanging or mixing data.
"""

from __future__ import annotations

import queue
import threading
from datetime import timedelta

import numpy as np

from . import algorithms as A
from .errors import _DistBackendError
from .process_group import Backend, _BackendOptions
from .reduce_op import RedOpType, op_type
from .tensor_data import Buffer, describe, dtype_name, numpy_dtype
from .transport import P2P, Mesh, store_host
from .work import AsyncWork

MODULE = "torch._C._distributed_c10d"
INTEGRAL = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool")


class _Device:
    def __init__(self, hostname: str = "", interface: str = ""):
        self.hostname, self.interface = hostname, interface


class _GlooOptions(_BackendOptions):
    def __init__(self, timeout: timedelta = timedelta(minutes=30)):
        super().__init__("gloo", timeout)
        self.devices = []
        self.threads = 2


_GlooOptions.__qualname__ = "ProcessGroupGloo.Options"
_GlooOptions.__name__ = "Options"
_GlooOptions.__module__ = MODULE
_Device.__qualname__ = "ProcessGroupGloo.Device"
_Device.__name__ = "Device"
_Device.__module__ = MODULE


def _reduce_name(op, dtype: str, what: str) -> str:
    t = op_type(op)
    if t == RedOpType.PREMUL_SUM:
        raise ValueError(f"Cannot use ReduceOp.{t.name} with Gloo")
    if t == RedOpType.AVG and dtype in INTEGRAL:
        raise RuntimeError(f"{what}: ReduceOp.AVG needs a floating point dtype, got {dtype}")
    if t in (RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR) and dtype not in INTEGRAL:
        raise RuntimeError(f"Cannot use ReduceOp.{t.name} with non-integral dtype")
    if numpy_dtype_name_ok(dtype) is False:
        raise RuntimeError(f"{what}: reductions over {dtype} are not supported")
    return t.name


def numpy_dtype_name_ok(dtype: str) -> bool:
    import torch

    return numpy_dtype(getattr(torch, dtype)) is not None


def _check_tensors(tensors, what: str) -> None:
    import torch

    if len(tensors) != 1:
        raise ValueError(f"ProcessGroupGloo::{what}: requires a single-element tensor list"
                         if tensors else f"ProcessGroupGloo::{what}: requires non-empty tensor list")
    for t in tensors:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"ProcessGroupGloo::{what}: expected tensors")
        if t.device.type != "cpu":
            raise ValueError(f"ProcessGroupGloo::{what}: only CPU tensors are supported here")
        if t.is_sparse:
            raise ValueError(f"ProcessGroupGloo::{what}: sparse tensors are not supported")


class ProcessGroupGloo(Backend):
    Options = _GlooOptions
    Device = _Device

    def __init__(self, store, rank: int, size: int, timeout: timedelta = timedelta(minutes=30)):
        super().__init__(rank, size)
        if not 0 <= rank < size:
            raise ValueError(f"ProcessGroupGloo: invalid rank {rank} for size {size}")
        self._options = _GlooOptions(timeout)
        self._store = store
        self._seq = 0
        self._mesh = Mesh(store, rank, size, timeout.total_seconds(), store_host(store))
        self._queue: queue.Queue = queue.Queue()
        self._worker = threading.Thread(target=self._run, daemon=True,
                                        name=f"gloo-worker-r{rank}")
        self._worker.start()
        self._recv_chain: dict[int, AsyncWork] = {}
        self._coalescing: list | None = None

    # -- options, identity ------------------------------------------------------------------
    @property
    def options(self):
        return self._options

    def name(self) -> str:
        return "gloo"

    def set_timeout(self, timeout: timedelta) -> None:
        self._options._timeout = timeout

    def _timeout_s(self, opts=None) -> float:
        t = getattr(opts, "timeout", None)
        if t is not None and t.total_seconds() >= 0:
            return t.total_seconds()
        return self._options._timeout.total_seconds()

    @staticmethod
    def create_device(hostname: str = "", interface: str = "", lazy_init=None):
        return _Device(hostname, interface)

    @staticmethod
    def create_default_device(lazy_init=None):
        return _Device("127.0.0.1")

    def _set_sequence_number_for_group(self) -> None:
        pass

    def _get_sequence_number_for_group(self) -> int:
        return self._seq

    def shutdown(self) -> None:
        self._queue.put(None)
        self._mesh.close()

    abort = shutdown

    # -- the worker -------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            work, fn = item
            try:
                fn()
            except BaseException as e:  # the Work carries the error to every waiter
                work._finish(e)
                continue
            work._finish()

    def _enqueue(self, fn, outputs, source_rank: int = -1) -> AsyncWork:
        work = AsyncWork(outputs, source_rank)
        self._queue.put((work, fn))
        return work

    def _collective(self, what: str, desc: str, fn, outputs, opts=None, agree=True) -> AsyncWork:
        """``agree=False``: ``fn`` exchanges the descriptor itself (``fn(ctx, desc)``)."""
        slot = self._seq
        self._seq += 1
        timeout = self._timeout_s(opts)

        def run():
            ctx = A.Context(self._mesh, slot, timeout, what)
            if not agree:
                return fn(ctx, desc)
            if self.size() > 1:
                ctx.agree(desc)
            fn(ctx)

        return self._enqueue(run, outputs)

    def _wait_for_pending_works(self) -> None:
        done = threading.Event()
        self._queue.put((AsyncWork(), done.set))
        done.wait()

    # -- collectives ------------------------------------------------------------------------
    def broadcast(self, tensors, opts):
        _check_tensors(tensors, "broadcast")
        root = opts.rootRank
        if not 0 <= root < self.size():
            raise ValueError(f"ProcessGroupGloo::broadcast: invalid root rank: {root}")
        t = tensors[0]

        def fn(ctx, desc):
            b = Buffer(t)
            A.broadcast(ctx, b.raw, root, desc)
            b.commit()

        return self._collective("broadcast", f"root{root}|{describe(t)}", fn, tensors, opts,
                                agree=False)

    def allreduce(self, tensors, opts):
        _check_tensors(tensors, "allreduce")
        t = tensors[0]
        op = _reduce_name(opts.reduceOp, dtype_name(t), "allreduce")

        def fn(ctx):
            b = Buffer(t)
            A.allreduce(ctx, b.values, "SUM" if op == "AVG" else op)
            if op == "AVG":  # the sum, then one division by the group size (in the dtype)
                np.divide(b.values, np.asarray(self.size(), b.values.dtype), out=b.values)
            b.commit()

        return self._collective("allreduce", f"{op}|{describe(t)}", fn, tensors, opts)

    def allreduce_coalesced(self, tensors, opts):
        import torch

        if not tensors:
            raise ValueError("ProcessGroupGloo::allreduce_coalesced: requires non-empty tensor list")
        dtypes = {t.dtype for t in tensors}
        if len(dtypes) != 1:
            raise ValueError("ProcessGroupGloo::allreduce_coalesced: tensors must all have the same type")
        op = _reduce_name(opts.reduceOp, dtype_name(tensors[0]), "allreduce_coalesced")

        def fn(ctx):
            flat = torch.cat([t.reshape(-1) for t in tensors])
            b = Buffer(flat)
            A.allreduce(ctx, b.values, op)
            off = 0
            for t in tensors:
                n = t.numel()
                t.copy_(flat[off:off + n].view(t.shape))
                off += n

        desc = f"{op}|" + ",".join(describe(t) for t in tensors)
        return self._collective("allreduce_coalesced", desc, fn, tensors, opts)

    def reduce(self, tensors, opts):
        _check_tensors(tensors, "reduce")
        root = opts.rootRank
        if not 0 <= root < self.size():
            raise ValueError(f"ProcessGroupGloo::reduce: invalid root rank: {root}")
        t = tensors[0]
        op = _reduce_name(opts.reduceOp, dtype_name(t), "reduce")

        def fn(ctx):
            b = Buffer(t)
            A.reduce(ctx, b.values, op, root)
            b.commit()

        return self._collective("reduce", f"{op}|root{root}|{describe(t)}", fn, tensors, opts)

    def allgather(self, output_tensors, input_tensors, opts):
        _check_tensors(input_tensors, "allgather")
        if len(output_tensors) != 1:
            raise ValueError("ProcessGroupGloo::allgather: requires a single-element output list")
        outs, t = output_tensors[0], input_tensors[0]
        if len(outs) != self.size():
            raise ValueError("ProcessGroupGloo::allgather: invalid output tensor list at index 0; "
                             f"requires {self.size()} tensors, got {len(outs)}")
        for o in outs:
            if o.dtype != t.dtype or o.numel() != t.numel():
                raise ValueError("ProcessGroupGloo::allgather: invalid tensor type or size at "
                                 "output; every output must match the input's dtype and size")

        def fn(ctx, desc):
            bs = [Buffer(o) for o in outs]
            A.allgather(ctx, Buffer(t).raw, [b.raw for b in bs], desc)
            for b in bs:
                b.commit()

        return self._collective("allgather", describe(t), fn, output_tensors, opts, agree=False)

    def _allgather_base(self, output, input, opts):
        if output.dtype != input.dtype:
            raise TypeError("output tensor must have the same type as input tensor")
        if output.numel() != input.numel() * self.size():
            raise ValueError("output tensor size must be equal to world_size times input tensor size")

        def fn(ctx, desc):
            b = Buffer(output)
            chunks = np.split(b.raw, self.size()) if b.raw.size else [b.raw] * self.size()
            A.allgather(ctx, Buffer(input).raw, chunks, desc)
            b.commit()

        return self._collective("allgather_into_tensor", describe(input), fn, [output], opts,
                                agree=False)

    def allgather_coalesced(self, output_lists, input_list, opts):
        works = [self.allgather([o], [i], opts) for o, i in zip(output_lists, input_list)]
        return _chain(self, works, output_lists)

    def allgather_into_tensor_coalesced(self, outputs, inputs, opts):
        works = [self._allgather_base(o, i, opts) for o, i in zip(outputs, inputs)]
        return _chain(self, works, outputs)

    def gather(self, output_tensors, input_tensors, opts):
        _check_tensors(input_tensors, "gather")
        root, t = opts.rootRank, input_tensors[0]
        if not 0 <= root < self.size():
            raise ValueError(f"ProcessGroupGloo::gather: invalid root rank: {root}")
        if self.rank() == root:
            if len(output_tensors) != 1 or len(output_tensors[0]) != self.size():
                raise ValueError("ProcessGroupGloo::gather: requires a single-element output list "
                                 f"containing a list with {self.size()} tensors")
            for o in output_tensors[0]:
                if o.dtype != t.dtype or o.numel() != t.numel():
                    raise ValueError("ProcessGroupGloo::gather: invalid tensor type or size at output")
        elif output_tensors and any(output_tensors):
            raise ValueError("ProcessGroupGloo::gather: requires empty output on non-root")

        def fn(ctx):
            bs = [Buffer(o) for o in output_tensors[0]] if self.rank() == root else None
            A.gather(ctx, Buffer(t).raw, [b.raw for b in bs] if bs else None, root)
            for b in bs or ():
                b.commit()

        return self._collective("gather", f"root{root}|{describe(t)}", fn, output_tensors, opts)

    def scatter(self, output_tensors, input_tensors, opts):
        _check_tensors(output_tensors, "scatter")
        root, out = opts.rootRank, output_tensors[0]
        if not 0 <= root < self.size():
            raise ValueError(f"ProcessGroupGloo::scatter: invalid root rank: {root}")
        if self.rank() == root:
            if len(input_tensors) != 1 or len(input_tensors[0]) != self.size():
                raise ValueError("ProcessGroupGloo::scatter: requires a single-element input list "
                                 f"containing a list with {self.size()} tensors")
            for i in input_tensors[0]:
                if i.dtype != out.dtype or i.numel() != out.numel():
                    raise ValueError("ProcessGroupGloo::scatter: invalid tensor type or size at input")
        elif input_tensors and any(input_tensors):
            raise ValueError("ProcessGroupGloo::scatter: requires empty input on non-root")

        def fn(ctx):
            b = Buffer(out)
            ins = [Buffer(i).raw for i in input_tensors[0]] if self.rank() == root else None
            A.scatter(ctx, ins, b.raw, root)
            b.commit()

        return self._collective("scatter", f"root{root}|{describe(out)}", fn, output_tensors, opts)

    def reduce_scatter(self, output_tensors, input_tensors, opts):
        _check_tensors(output_tensors, "reduce_scatter")
        out = output_tensors[0]
        if len(input_tensors) != 1 or len(input_tensors[0]) != self.size():
            raise ValueError("ProcessGroupGloo::reduce_scatter: requires a single-element input "
                             f"list containing a list with {self.size()} tensors")
        ins = input_tensors[0]
        for i in ins:
            if i.dtype != out.dtype or i.numel() != out.numel():
                raise ValueError("ProcessGroupGloo::reduce_scatter: invalid tensor type or size")
        op = _reduce_name(opts.reduceOp, dtype_name(out), "reduce_scatter")

        def fn(ctx):
            b = Buffer(out)
            A.reduce_scatter(ctx, [Buffer(i).values for i in ins], b.values, op)
            b.commit()

        return self._collective("reduce_scatter", f"{op}|{describe(out)}", fn, output_tensors, opts)

    def _reduce_scatter_base(self, output, input, opts):
        if output.dtype != input.dtype:
            raise TypeError("input tensor must be the same type as the output tensor.")
        if input.numel() != output.numel() * self.size():
            raise ValueError("input tensor must be the same size as output size times world size")
        op = _reduce_name(opts.reduceOp, dtype_name(output), "reduce_scatter_tensor")

        def fn(ctx):
            b = Buffer(output)
            vals = Buffer(input).values
            chunks = np.split(vals, self.size())
            A.reduce_scatter(ctx, chunks, b.values, op)
            b.commit()

        return self._collective("reduce_scatter_tensor", f"{op}|{describe(output)}", fn, [output], opts)

    def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts):
        works = [self._reduce_scatter_base(o, i, opts) for o, i in zip(outputs, inputs)]
        return _chain(self, works, outputs)

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts):
        n = self.size()
        if output.dtype != input.dtype:
            raise ValueError("ProcessGroupGloo::alltoall_base: tensors must have the same dtype")

        def splits(t, sizes, name):
            rows = t.shape[0] if t.dim() else 1
            if not sizes:
                if rows % n:
                    raise ValueError(f"Tensor's dim 0 does not divide equally across group size")
                sizes = [rows // n] * n
            if len(sizes) != n or sum(sizes) != rows:
                raise ValueError(f"Split sizes doesn't match total dim 0 size ({name})")
            return sizes

        osz = splits(output, output_split_sizes, "output")
        isz = splits(input, input_split_sizes, "input")
        row_o = output.numel() // max(output.shape[0], 1) if output.dim() else 1
        row_i = input.numel() // max(input.shape[0], 1) if input.dim() else 1

        def fn(ctx):
            bo, bi = Buffer(output), Buffer(input)
            item = output.element_size()
            so = np.cumsum([0] + [s * row_o * item for s in osz])
            si = np.cumsum([0] + [s * row_i * item for s in isz])
            A.alltoall(ctx, [bi.raw[si[p]:si[p + 1]] for p in range(n)],
                       [bo.raw[so[p]:so[p + 1]] for p in range(n)])
            bo.commit()

        return self._collective("all_to_all_single", f"{dtype_name(input)}|row{row_i}", fn,
                                [output], opts)

    def alltoall(self, output_tensors, input_tensors, opts):
        n = self.size()
        if len(output_tensors) != n or len(input_tensors) != n:
            raise ValueError(f"ProcessGroupGloo::alltoall: requires {n} input and output tensors")
        dts = {t.dtype for t in (*output_tensors, *input_tensors)}
        if len(dts) != 1:
            raise ValueError("ProcessGroupGloo::alltoall: tensors must all have the same dtype")

        def fn(ctx):
            bo = [Buffer(o) for o in output_tensors]
            A.alltoall(ctx, [Buffer(i).raw for i in input_tensors], [b.raw for b in bo])
            for b in bo:
                b.commit()

        return self._collective("all_to_all", dtype_name(input_tensors[0]), fn, output_tensors, opts)

    def barrier(self, opts):
        return self._collective("barrier", "", A.barrier, [], opts)

    def monitored_barrier(self, timeout=None, wait_all_ranks: bool = False):
        """Rank 0 waits for every rank's arrival within ``timeout`` and names the ranks that did
        not arrive; the others wait for rank 0's release. Runs on the caller's thread."""
        import time

        timeout = timeout if timeout is not None else self._options._timeout
        self._wait_for_pending_works()
        slot = self._seq
        self._seq += 1
        seconds = timeout.total_seconds()
        ctx = A.Context(self._mesh, slot, seconds, "monitored_barrier")
        if self.rank() != 0:
            try:
                ctx.send(0, "arrive", None)
                ctx.recv(0, "release")
            except _DistBackendError as e:
                # upstream's wording and type (a plain RuntimeError), the cause appended
                error = (f"Rank {self.rank()} successfully reached monitoredBarrier, but received "
                         "errors while waiting for send/recv from rank 0. Please check rank 0 "
                         "logs for faulty rank.")
                raise RuntimeError(f"{error}\n Original exception: \n{e}") from None
            return
        deadline = time.monotonic() + seconds
        missing = []
        for p in range(1, self.size()):
            try:
                ctx.mesh.recv(A.COLL, p, slot, max(0.0, deadline - time.monotonic()), ctx.what)
            except _DistBackendError:
                missing.append(p)
                if not wait_all_ranks:
                    break
        ms = int(seconds * 1000)
        # upstream raises these as plain RuntimeErrors
        if len(missing) == 1 and not wait_all_ranks:
            raise RuntimeError(f"[Rank 0]: Rank {missing[0]} failed to pass monitoredBarrier in {ms} ms")
        if missing:
            raise RuntimeError(f"[Rank 0]: Ranks {', '.join(map(str, missing))} failed to pass "
                               f"monitoredBarrier in {ms} ms")
        for p in range(1, self.size()):
            ctx.send(p, "release", None)

    # -- point to point ---------------------------------------------------------------------
    def send(self, tensors, dstRank: int, tag: int):
        _check_tensors(tensors, "send")
        if not 0 <= dstRank < self.size() or dstRank == self.rank():
            raise ValueError(f"ProcessGroupGloo::send: invalid destination rank {dstRank}")
        t = tensors[0]
        data = Buffer(t).raw.copy()  # the caller may modify the tensor once send returns
        desc = describe(t)

        def fn():
            self._mesh.send(P2P, dstRank, tag, desc, data)

        return self._enqueue(fn, tensors)

    def recv(self, tensors, srcRank: int, tag: int):
        _check_tensors(tensors, "recv")
        if not 0 <= srcRank < self.size() or srcRank == self.rank():
            raise ValueError(f"ProcessGroupGloo::recv: invalid source rank {srcRank}")
        t = tensors[0]
        timeout = self._timeout_s()
        return self._recv_work(t, lambda: (srcRank, self._mesh.recv(P2P, srcRank, tag, timeout, "recv")),
                               tensors, srcRank)

    def recv_anysource(self, tensors, tag: int):
        _check_tensors(tensors, "recv_anysource")
        t = tensors[0]
        timeout = self._timeout_s()
        return self._recv_work(t, lambda: self._mesh.recv_any(P2P, tag, timeout, "recv_anysource"),
                               tensors, -1)

    def _recv_work(self, t, take, tensors, src):
        work = AsyncWork(tensors, src)
        previous = self._recv_chain.get(src)
        self._recv_chain[src] = work

        def run():
            if previous is not None:  # receives from one source complete in posting order
                previous._event.wait()
            try:
                peer, (desc, payload) = take()
                if desc != describe(t):
                    raise _DistBackendError(
                        f"recv: rank {self.rank()} expected {describe(t)} but rank {peer} sent {desc}")
                b = Buffer(t)
                b.raw[...] = payload
                b.commit()
                work._source_rank_value = peer
            except BaseException as e:
                work._finish(e)
                return
            work._finish()

        # receives run on their own thread: a recv posted before the matching send is the usual
        # pattern (irecv, then send), and must not block the collective queue
        threading.Thread(target=run, daemon=True).start()
        return work


ProcessGroupGloo.__module__ = MODULE


def _chain(backend, works, outputs):
    """One work for several queued ones (they run in order on the worker)."""
    def fn():
        for w in works:
            w.wait()

    return backend._enqueue(fn, outputs)
