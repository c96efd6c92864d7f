"""SecAgg+ inside the Engine, through its per-round Transform hook.

The round's c10d store is the bulletin board of stages 1-3: each participant reads the cohort the
coordinator wrote (``participants``), publishes its public keys, waits (bounded) for its
neighbours', posts its sealed shares and reads those addressed to it, then sends its masked
vector as the update (int64 field elements, the same names and shapes). The coordinator, in
``on_receive``, sums the masked vectors, asks every survivor for its shares through the store
(stage 4 is answered by a thread the participant left waiting, on a store connection of its own)
and hands the aggregator one entry: the unmasked weighted mean.

Without a router the coordinator does not decide who masked with whom, so every participant
publishes the peers it masked with; a pair masked on one side only (a timeout in the middle of
key sharing) fails the round by name rather than returning a wrong sum.
"""

from __future__ import annotations

import datetime
import random
import threading
import time

import numpy as np
import torch
import torch.distributed as dist

from ..transform import RoundContext, Transform
from . import wire
from .protocol import Config, Coordinator, Participant, SecAggRoundFailed, neighbours

_POLL = 0.02
BULLETIN_BYTES = [0]  # values this process wrote to or read from the bulletin board (for benchmarks)


def _put(store, key: str, value) -> None:
    data = wire.json_bytes(value)
    BULLETIN_BYTES[0] += len(data)
    store.set(key, data)


def _get(store, key: str):
    data = store.get(key)
    BULLETIN_BYTES[0] += len(data)
    return wire.from_json_bytes(data)


def _gather(store, keys: list[str], deadline: float) -> dict[str, object]:
    """The keys that appear before ``deadline`` (polled: a timed-out wait can leave a store
    client mid-command)."""
    found: dict[str, object] = {}
    while True:
        for k in keys:
            if k not in found and store.check([k]):
                found[k] = _get(store, k)
        if len(found) == len(keys) or time.monotonic() >= deadline:
            return found
        time.sleep(_POLL)


class SecureAggregation(Transform):
    """``Engine(..., transform=SecureAggregation(num_shares=5, threshold=3))``. The coordinator
    learns the weighted mean of the survivors' deltas (and their total weight), no single delta.
    ``view_dir``, when given, receives what the coordinator saw each round (for inspection)."""

    def __init__(self, num_shares: int = 5, threshold: int = 3, clip: float = 8.0, levels: int = 1 << 22,
                 modulus: int = 1 << 32, max_weight: float = 1000.0, view_dir: str | None = None):
        self.params = dict(num_shares=num_shares, threshold=threshold, clip=clip, levels=levels,
                           modulus=modulus, max_weight=max_weight)
        self.view_dir = view_dir
        self.last_weight: float | None = None

    def _config(self, size: int, cohort: int) -> Config:
        p = dict(self.params)
        p["num_shares"] = min(p["num_shares"], cohort)
        return Config(size=size, **p)

    @staticmethod
    def _graph(roster: list[int], cfg: Config, ctx: RoundContext) -> dict[int, list[int]]:
        # both sides derive the same ring; it changes every round
        order = sorted(roster)
        random.Random(f"{ctx.seed}/{ctx.round}").shuffle(order)
        return neighbours(order, cfg.num_shares)

    # ------------------------------------------------------------------ participant
    def on_send(self, update: dict, ctx: RoundContext) -> dict:
        store, pid = ctx.store, ctx.participant
        roster = [int(x) for x in store.get("participants").decode().split(",")]
        names = list(update)
        flat = torch.cat([t.detach().reshape(-1).double() for t in update.values()]).numpy()
        cfg = self._config(flat.size, len(roster))
        cfg.check(len(roster))
        graph = self._graph(roster, cfg, ctx)
        me = Participant(pid, cfg)
        mine = me.setup(graph[pid])
        _put(store, f"pk/{pid}", mine)
        deadline = time.monotonic() + ctx.timeout
        got = _gather(store, [f"pk/{j}" for j in graph[pid] if j != pid], deadline)
        public = {pid: mine, **{int(k.split("/")[1]): v for k, v in got.items()}}
        for dst, box in me.share_keys(public).items():
            _put(store, f"share/{pid}/{dst}", box)
        _put(store, f"shared/{pid}", sorted(public))
        got = _gather(store, [f"share/{j}/{pid}" for j in public if j != pid], time.monotonic() + ctx.timeout)
        inbox = {int(k.split("/")[1]): v for k, v in got.items()}
        vec = me.masked_input(inbox, flat, weight=ctx.num_samples)
        _put(store, f"masked_with/{pid}", me.masked_with)
        _put(store, f"meta/{pid}", {"weight": int(vec[-1]), "dtype": str(next(iter(update.values())).dtype)})
        self._answer_unmask_later(store, pid, me, ctx)
        out, off = {}, 0
        for n in names:
            k = update[n].numel()
            out[n] = torch.from_numpy(vec[off:off + k].astype(np.int64)).reshape(update[n].shape)
            off += k
        return out

    @staticmethod
    def _answer_unmask_later(store, pid: int, me: Participant, ctx: RoundContext) -> None:
        # stage 4 comes after the update is sent, while the engine waits for its next command;
        # a connection of its own keeps the engine's store client single-threaded
        base = store.underlying_store
        host, port = base.host, base.port

        def serve():
            client = dist.PrefixStore(f"xform/{ctx.round}", dist.TCPStore(
                host, port, is_master=False, wait_for_workers=False,
                timeout=datetime.timedelta(seconds=ctx.timeout)))
            req = _gather(client, [f"unmask/{pid}"], time.monotonic() + 4 * ctx.timeout)
            if req:
                alive, dropped = req[f"unmask/{pid}"]
                _put(client, f"unmasked/{pid}", me.unmask(alive, dropped))

        threading.Thread(target=serve, name=f"secagg-unmask-{pid}", daemon=True).start()

    # ------------------------------------------------------------------ coordinator
    @staticmethod
    def _collect_shares(store, coord: Coordinator, asked: list[int], deadline: float) -> dict:
        """Survivors' stage-4 answers, until all answered, or every secret has its threshold of
        shares (a survivor that left after sending is not waited for), or the deadline."""
        answers: dict[int, dict] = {}
        while True:
            for pid in asked:
                if pid not in answers and store.check([f"unmasked/{pid}"]):
                    answers[pid] = _get(store, f"unmasked/{pid}")
            counts = {nid: sum(nid in a for a in answers.values()) for nid in coord.s2}
            if len(answers) == len(asked) or min(counts.values()) >= coord.cfg.threshold \
                    or time.monotonic() >= deadline:
                return answers
            time.sleep(_POLL)

    def on_receive(self, updates: dict, weights: dict, ctx: RoundContext):
        store = ctx.store
        roster = sorted(ctx.participants)
        names = list(next(iter(updates.values())))
        shapes = {n: tuple(t.shape) for n, t in next(iter(updates.values())).items()}
        size = sum(int(np.prod(s)) for s in shapes.values())
        cfg = self._config(size, len(roster))
        coord = Coordinator(cfg, roster)
        coord.graph = self._graph(roster, cfg, ctx)
        present = lambda key: [j for j in roster if store.check([f"{key}/{j}"])]
        coord.pk = {j: _get(store, f"pk/{j}") for j in present("pk")}
        coord.s1 = set(coord.pk)
        coord.s2 = set(present("shared")) & coord.s1
        masked = {}
        for pid, u in updates.items():
            if pid in coord.s2 and store.check([f"meta/{pid}"]):
                meta = _get(store, f"meta/{pid}")
                vec = np.concatenate([u[n].reshape(-1).numpy().astype(np.int64) for n in names] + [[meta["weight"]]])
                masked[pid] = vec
        dtype = getattr(torch, _get(store, f"meta/{next(iter(masked))}")["dtype"].split(".")[-1]) if masked else torch.float32
        masked_with = {pid: _get(store, f"masked_with/{pid}") for pid in masked}
        for i in masked:
            for j in masked:
                if (j in masked_with[i]) != (i in masked_with[j]):
                    raise SecAggRoundFailed(f"round {ctx.round}: participants {i} and {j} disagree on their pairwise "
                                            f"mask (a timeout during key sharing); the sum cannot be recovered")
        if self.view_dir is not None:
            np.savez(f"{self.view_dir}/coordinator_view_r{ctx.round}.npz",
                     **{f"p{pid}": v for pid, v in masked.items()})
        requests = coord.collect(masked)
        for pid, (alive, dropped) in requests.items():
            _put(store, f"unmask/{pid}", [alive, dropped])
        answers = self._collect_shares(store, coord, list(requests), time.monotonic() + ctx.timeout)
        mean, weight = coord.unmask(answers, masked_with)  # fails by name below the threshold
        self.last_weight = weight
        out, off = {}, 0
        for n in names:
            k = int(np.prod(shapes[n]))
            out[n] = torch.from_numpy(mean[off:off + k].reshape(shapes[n])).to(dtype)
            off += k
        return {-1: out}, {-1: 1}
