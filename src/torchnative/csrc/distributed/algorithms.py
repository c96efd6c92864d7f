"""Collective algorithms over a Mesh, on numpy byte buffers.

Small messages go directly (every rank sends to every rank that needs the data): one round of
latency. Large all-reduces use a ring (reduce-scatter then all-gather), which moves 2(n-1)/n of
the buffer per rank instead of (n-1) buffers. Reductions combine contributions in rank order, so
every rank ends with identical bits.
"""

from __future__ import annotations

import numpy as np

from .transport import COLL

RING_MIN_BYTES = 256 * 1024

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

    def recv_into(self, peer: int, desc: str, out: np.ndarray) -> None:
        payload = self.recv(peer, desc)
        if payload.nbytes != out.nbytes:
            self.fail(f"rank {self.rank} expected {out.nbytes} bytes from rank {peer}, got "
                      f"{payload.nbytes}")
        out[...] = payload.view(out.dtype).reshape(out.shape)

    def fail(self, message: str):
        from .errors import _DistBackendError

        message = f"{self.what}: mismatched collective across ranks: {message}"
        self.mesh.abort_all(message)
        raise _DistBackendError(message)

    def agree(self, desc: str) -> None:
        """Every rank sends its descriptor to every other and checks theirs: a mismatch (shape,
        dtype, root, operation) raises the same clear error on every rank before data moves."""
        mine = f"{self.what}|{desc}"
        for p in range(self.size):
            if p != self.rank:
                self.mesh.send(COLL, p, self.slot, "agree", mine.encode())
        bad = []
        for p in range(self.size):
            if p != self.rank:
                _, payload = self.mesh.recv(COLL, p, self.slot, self.timeout_s, self.what)
                theirs = payload.tobytes().decode()
                if theirs != mine:
                    bad.append(f"rank {p} called {theirs}")
        if bad:
            from .errors import _DistBackendError

            raise _DistBackendError(f"mismatched collective across ranks: rank {self.rank} "
                                    f"called {mine}; " + "; ".join(bad))


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
    fn = REDUCERS[op]
    bounds = np.linspace(0, values.size, n + 1).astype(np.int64)
    seg = [values[bounds[i]:bounds[i + 1]] for i in range(n)]
    right, left = (r + 1) % n, (r - 1) % n
    for step in range(n - 1):  # reduce-scatter: rank r ends owning segment (r + 1) % n
        s_idx, r_idx = (r - step) % n, (r - step - 1) % n
        ctx.send(right, f"rs{step}", seg[s_idx])
        incoming = ctx.recv(left, f"rs{step}").view(values.dtype)
        fn(incoming, seg[r_idx], out=seg[r_idx])
    for step in range(n - 1):  # all-gather of the owned segments
        s_idx, r_idx = (r + 1 - step) % n, (r - step) % n
        ctx.send(right, f"ag{step}", seg[s_idx])
        ctx.recv_into(left, f"ag{step}", seg[r_idx])


def broadcast(ctx: Context, raw: np.ndarray, root: int) -> None:
    if ctx.rank == root:
        for p in range(ctx.size):
            if p != root:
                ctx.send(p, "data", raw)
    else:
        ctx.recv_into(root, "data", raw)


def reduce(ctx: Context, values: np.ndarray, op: str, root: int) -> None:
    if ctx.rank != root:
        ctx.send(root, "data", values)
        return
    parts = [values.copy() if p == root else ctx.recv(p, "data").view(values.dtype)
             for p in range(ctx.size)]
    _reduce_in_order(op, parts, values)


def allgather(ctx: Context, raw: np.ndarray, outs: list[np.ndarray]) -> None:
    for p in range(ctx.size):
        if p != ctx.rank:
            ctx.send(p, "data", raw)
    outs[ctx.rank][...] = raw.reshape(outs[ctx.rank].shape)
    for p in range(ctx.size):
        if p != ctx.rank:
            ctx.recv_into(p, "data", outs[p])


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
