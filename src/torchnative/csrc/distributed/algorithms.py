"""Collective algorithms over a Mesh, on numpy byte buffers.

Small messages go directly (every rank sends to every rank that needs the data): one round of
latency. Large all-reduces use a ring (reduce-scatter then all-gather), which moves 2(n-1)/n of
the buffer per rank instead of (n-1) buffers, in chunks: each chunk's receive buffer is posted
before it can arrive (the reduce-scatter's into a scratch buffer kept between calls, the
all-gather's into its place in the result), and a chunk is reduced while the next one is on
the wire. Small-message reductions combine contributions in rank order; the ring's owner
reduces its segment and forwards the bits; either way every rank ends with identical bits.
"""

from __future__ import annotations

import numpy as np

from .transport import COLL

RING_MIN_BYTES = 256 * 1024
RING_CHUNK_BYTES = 1 << 20
# Broadcasts from here on go down a pipelined chain. Below it one direct round wins: each
# chunk's hop costs a thread wake-up, and on two busy cores those, not bytes, decide 1 MiB
# (measured at a load average of ~12: 1 MiB took 1.1 ms direct vs 4.2 ms chained at world 2,
# 2.0 vs 5.0 ms at world 4; 4 MiB was even at world 4).
CHAIN_MIN_BYTES = 4 << 20
CHAIN_CHUNK_BYTES = 1 << 20

REDUCERS = {"SUM": np.add, "PRODUCT": np.multiply, "MIN": np.minimum, "MAX": np.maximum,
            "BAND": np.bitwise_and, "BOR": np.bitwise_or, "BXOR": np.bitwise_xor}


class Context:
    """One collective's view of the mesh: its slot, timeout and descriptor checks."""

    def __init__(self, mesh, slot: int, timeout_s: float, what: str):
        self.mesh, self.slot, self.timeout_s, self.what = mesh, slot, timeout_s, what
        self.rank, self.size = mesh.rank, mesh.size

    def send(self, peer: int, desc: str, payload) -> None:
        self.mesh.send(COLL, peer, self.slot, f"{self.what}|{desc}", payload)

    def recv(self, peer: int, desc: str) -> np.ndarray:
        got, payload = self.mesh.recv(COLL, peer, self.slot, self.timeout_s, self.what)
        want = f"{self.what}|{desc}"
        if got != want:
            self.fail(f"rank {self.rank} expected {want} from rank {peer}, which sent {got}")
        return payload

    def post(self, peer: int, desc: str, out: np.ndarray) -> None:
        """Let the frame ``desc`` from ``peer`` land in ``out`` (contiguous) as it arrives."""
        self.mesh.post(COLL, peer, self.slot, f"{self.what}|{desc}", out.reshape(-1).view(np.uint8))

    def take(self, peer: int, desc: str, out: np.ndarray) -> None:
        """Wait for a posted frame; copy it into ``out`` only if it arrived before its post."""
        payload = self.recv(peer, desc)
        if payload.ctypes.data != out.ctypes.data:  # (a posted frame always has its size)
            self.place(peer, payload, out)

    def place(self, peer: int, payload: np.ndarray, out: np.ndarray) -> None:
        """Copy ``peer``'s payload (bytes) into ``out``, which must be its size."""
        if payload.nbytes != out.nbytes:
            self.fail(f"rank {self.rank} expected {out.nbytes} bytes from rank {peer}, got "
                      f"{payload.nbytes}")
        out[...] = payload.view(out.dtype).reshape(out.shape)

    def recv_into(self, peer: int, desc: str, out: np.ndarray) -> None:
        self.place(peer, self.recv(peer, desc), out)

    def fail(self, message: str):
        from .errors import _DistBackendError

        message = f"{self.what}: mismatched collective across ranks: {message}"
        self.mesh.abort_all(message)
        raise _DistBackendError(message)

    def agree(self, desc: str, carry=None) -> list:
        """Every rank sends its descriptor to every other and checks theirs: a mismatch (shape,
        dtype, root, operation) raises the same clear error on every rank before any result is
        written. The frames may carry a payload (``carry``: a small broadcast's data from its
        root, an all_gather's part from every rank), saving a round; the payloads received are
        returned by rank once every descriptor matched."""
        mine = f"{self.what}|{desc}"
        for p in range(self.size):
            if p != self.rank:
                self.mesh.send(COLL, p, self.slot, mine, carry)
        bad, carried = [], [None] * self.size
        for p in range(self.size):
            if p != self.rank:
                theirs, carried[p] = self.mesh.recv(COLL, p, self.slot, self.timeout_s, self.what)
                if theirs != mine:
                    bad.append(f"rank {p} called {theirs}")
        if bad:
            from .errors import _DistBackendError

            raise _DistBackendError(f"mismatched collective across ranks: rank {self.rank} "
                                    f"called {mine}; " + "; ".join(bad))
        return carried


def _reduce_in_order(op, parts: list[np.ndarray], out: np.ndarray) -> None:
    """out = parts[0] op parts[1] op ... (rank order)."""
    fn = REDUCERS[op]
    if len(parts) == 1:
        out[...] = parts[0]
        return
    fn(parts[0], parts[1], out=out)
    for p in parts[2:]:
        fn(out, p, out=out)


def allreduce(ctx: Context, values: np.ndarray, op: str) -> None:
    n, r = ctx.size, ctx.rank
    if n == 1:
        return
    if values.nbytes < RING_MIN_BYTES or values.size < n:
        for p in range(n):
            if p != r:
                ctx.send(p, "all", values)
        parts = [values.copy() if p == r else ctx.recv(p, "all").view(values.dtype)
                 for p in range(n)]
        _reduce_in_order(op, parts, values)
        return
    try:
        _ring_allreduce(ctx, values, REDUCERS[op])
    finally:
        ctx.mesh.unpost(COLL, ctx.slot)


def _scratch(mesh, rows: int, nbytes: int) -> np.ndarray:
    """``rows`` receive areas of ``nbytes`` each, kept on the mesh (fresh pages cost more than the
    copy they would hold); collectives of one group run one at a time on its worker thread."""
    have = getattr(mesh, "ring_scratch", None)
    if have is None or have.shape[0] < rows or have.shape[1] < nbytes:
        have = mesh.ring_scratch = np.empty((rows, -(-nbytes // 64) * 64), np.uint8)  # rows aligned
    return have[:rows, :nbytes]


def _ring_allreduce(ctx: Context, values: np.ndarray, fn) -> None:
    n, r = ctx.size, ctx.rank
    right, left = (r + 1) % n, (r - 1) % n
    bounds = np.linspace(0, values.size, n + 1).astype(np.int64)
    step_elems = max(1, RING_CHUNK_BYTES // values.itemsize)

    def chunks(i):  # (start, stop) element ranges of segment i
        lo, hi = int(bounds[i]), int(bounds[i + 1])
        return [(a, min(a + step_elems, hi)) for a in range(lo, hi, step_elems)]

    seg_bytes = int(np.diff(bounds).max()) * values.itemsize
    rows = min(3, n - 1)  # reduce-scatter steps whose receive areas are live at once
    scratch = _scratch(ctx.mesh, rows, seg_bytes)
    steps = 2 * (n - 1)  # n-1 reduce-scatter steps, then n-1 all-gather steps

    def send_seg(s):
        return (r - s) % n if s < n - 1 else (r + 1 - (s - n + 1)) % n

    def recv_seg(s):  # = send_seg(s + 1): what a step receives, the next one forwards
        return (r - s - 1) % n if s < n - 1 else (r - (s - n + 1)) % n

    def dest(s, a, b):  # where step s's chunk [a, b) is received
        if s >= n - 1:
            return values[a:b]
        base = int(bounds[recv_seg(s)])
        return scratch[s % rows].view(values.dtype)[a - base:b - base]

    def post(s):
        for c, (a, b) in enumerate(chunks(recv_seg(s))):
            ctx.post(left, f"s{s}c{c}", dest(s, a, b))

    def land(s, c, a, b):
        buf = dest(s, a, b)
        ctx.take(left, f"s{s}c{c}", buf)
        if s < n - 1:  # reduce-scatter: the left neighbour's partial result, then ours
            fn(buf, values[a:b], out=values[a:b])

    # An all-gather chunk can only arrive after this rank sent its part of it (the value is the
    # reduction of every rank's contribution), so its place may be posted now; a reduce-scatter
    # area is free again once the step that used it before has landed.
    for s in list(range(min(rows, n - 1))) + list(range(n - 1, steps)):
        post(s)
    for c, (a, b) in enumerate(chunks(send_seg(0))):
        ctx.send(right, f"s0c{c}", values[a:b])
    for s in range(1, steps):
        if rows <= s + rows - 2 < n - 1:  # its area's last user, step s - 2, landed in loop s - 1
            post(s + rows - 2)
        # each chunk goes on as soon as it has landed: chunks flow round the ring independently
        for c, (a, b) in enumerate(chunks(send_seg(s))):
            land(s - 1, c, a, b)
            ctx.send(right, f"s{s}c{c}", values[a:b])
    for c, (a, b) in enumerate(chunks(recv_seg(steps - 1))):
        land(steps - 1, c, a, b)


def _pieces(nbytes: int, step: int) -> list[tuple[int, int]]:
    return [(a, min(a + step, nbytes)) for a in range(0, nbytes, step)]


def broadcast(ctx: Context, raw: np.ndarray, root: int, desc: str) -> None:
    """Small messages ride on the descriptor exchange (the root's frames carry the data: one
    round). Large ones go down a chain root -> root+1 -> ... in chunks, each forwarded as soon
    as it lands and straight into the tensor's memory (every rank sends the message at most
    once, so no link carries it n-1 times and the copying is spread over the ranks)."""
    n, r = ctx.size, ctx.rank
    if n == 1:
        return
    if raw.nbytes < CHAIN_MIN_BYTES:
        got = ctx.agree(desc, raw if r == root else None)
        if r != root:
            ctx.place(root, got[root], raw)
        return
    ctx.agree(desc)
    parent, last = (r - 1) % n, (root - 1) % n
    children = [] if r == last else [(r + 1) % n]
    pieces = _pieces(raw.nbytes, CHAIN_CHUNK_BYTES)
    if r == root:
        for c, (a, b) in enumerate(pieces):
            for p in children:
                ctx.send(p, f"c{c}", raw[a:b])
        return
    try:
        for c, (a, b) in enumerate(pieces):
            ctx.post(parent, f"c{c}", raw[a:b])
        for c, (a, b) in enumerate(pieces):
            ctx.take(parent, f"c{c}", raw[a:b])
            for p in children:
                ctx.send(p, f"c{c}", raw[a:b])
    finally:
        ctx.mesh.unpost(COLL, ctx.slot)


def reduce(ctx: Context, values: np.ndarray, op: str, root: int) -> None:
    if ctx.rank != root:
        ctx.send(root, "data", values)
        return
    parts = [values.copy() if p == root else ctx.recv(p, "data").view(values.dtype)
             for p in range(ctx.size)]
    _reduce_in_order(op, parts, values)


def allgather(ctx: Context, raw: np.ndarray, outs: list[np.ndarray], desc: str) -> None:
    """Every rank's part rides on the descriptor exchange: one round."""
    got = ctx.agree(desc, raw)
    outs[ctx.rank][...] = raw.reshape(outs[ctx.rank].shape)
    for p in range(ctx.size):
        if p != ctx.rank:
            ctx.place(p, got[p], outs[p])


def gather(ctx: Context, raw: np.ndarray, outs: list[np.ndarray] | None, root: int) -> None:
    if ctx.rank != root:
        ctx.send(root, "data", raw)
        return
    for p in range(ctx.size):
        if p == root:
            outs[p][...] = raw.reshape(outs[p].shape)
        else:
            ctx.recv_into(p, "data", outs[p])


def scatter(ctx: Context, ins: list[np.ndarray] | None, out: np.ndarray, root: int) -> None:
    if ctx.rank == root:
        for p in range(ctx.size):
            if p != root:
                ctx.send(p, "data", np.ascontiguousarray(ins[p]))
        out[...] = ins[root].reshape(out.shape)
    else:
        ctx.recv_into(root, "data", out)


def reduce_scatter(ctx: Context, ins: list[np.ndarray], out: np.ndarray, op: str) -> None:
    for p in range(ctx.size):
        if p != ctx.rank:
            ctx.send(p, "data", np.ascontiguousarray(ins[p]))
    parts = [ins[p].copy() if p == ctx.rank else ctx.recv(p, "data").view(out.dtype)
             for p in range(ctx.size)]
    _reduce_in_order(op, parts, out)


def alltoall(ctx: Context, ins: list[np.ndarray], outs: list[np.ndarray]) -> None:
    for p in range(ctx.size):
        if p != ctx.rank:
            ctx.send(p, f"to{p}", np.ascontiguousarray(ins[p]))
    outs[ctx.rank][...] = ins[ctx.rank].reshape(outs[ctx.rank].shape)
    for p in range(ctx.size):
        if p != ctx.rank:
            ctx.recv_into(p, f"to{ctx.rank}", outs[p])


def barrier(ctx: Context) -> None:
    for p in range(ctx.size):
        if p != ctx.rank:
            ctx.send(p, "barrier", None)
    for p in range(ctx.size):
        if p != ctx.rank:
            ctx.recv(p, "barrier")
