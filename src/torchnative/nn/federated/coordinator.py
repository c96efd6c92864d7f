"""The coordinator: hosts the run's store, admits participants, runs the rounds.

Per round: admit new joins (a restarted participant comes back with a new incarnation), select
among the idle participants, send each the global model over its own link, collect updates until
all reported or the round's timeout, refuse bad or stale ones by name, check the quorum, and only
then aggregate. Every wait is bounded.
"""

from __future__ import annotations

import queue
import time
from dataclasses import dataclass, field

import torch

from . import wire
from .errors import QuorumError, RejectedUpdate, StaleUpdate
from .link import Link
from .select import choose
from .transform import RoundContext
from .validate import check_update


@dataclass
class RoundReport:
    round: int
    selected: list
    reported: list                 # ids whose updates were aggregated
    weights: dict                  # id -> sample count
    dropped: dict                  # id -> why it did not report (died, timed out)
    refused: dict                  # id -> why its update was refused (by name)
    stale: list = field(default_factory=list)   # (id, its round) refused as late during this round
    bytes_down: int = 0
    bytes_up: int = 0
    seconds: float = 0.0
    available: int = 0             # participants it was selected from (the sample rate's denominator)
    epsilon: float | None = None   # the run's (epsilon, delta) after this round, with a DP transform
    delta: float | None = None


class Coordinator:
    def __init__(self, store, *, spec: dict, expected: int | None, aggregator, transform, select,
                 min_participants: int, on_missing: str, timeout: float, late_timeout: float,
                 join_timeout: float, max_payload_bytes: int, seed: int):
        self.store, self.spec = store, spec
        self.expected = expected
        self.aggregator, self.transform, self.select = aggregator, transform, select
        self.min_participants, self.on_missing = min_participants, on_missing
        self.timeout, self.late_timeout, self.join_timeout = timeout, late_timeout, join_timeout
        self.cap, self.seed = max_payload_bytes, seed
        self.events: queue.Queue = queue.Queue()
        self.links: dict[int, Link] = {}
        self._join_seen = 0
        self._pending_joins: list[int] = []
        self._stale: list = []
        self.round = 0
        store.set("fed/coordinator", "up")

    # ------------------------------------------------------------------ participants
    def _admit(self):
        n = self.store.add("fed/joins", 0)
        self._pending_joins += range(self._join_seen + 1, n + 1)
        self._join_seen = n
        still = []
        for slot in self._pending_joins:
            key = f"fed/join/{slot}"
            if not self.store.check([key]):
                still.append(slot)  # counted but not yet written (or the joiner died in between)
                continue
            pid, inc = (int(v) for v in self.store.get(key).decode().split(":"))
            old = self.links.get(pid)
            if old is not None and old.inc >= inc:
                continue
            if old is not None and old.state not in ("dead", "stopped"):
                old.state, old.reason = "dead", f"replaced by incarnation {inc}"
            self.links[pid] = Link(pid, inc, self.store, self.events, late_timeout=self.late_timeout,
                                   max_payload_bytes=self.cap, max_tensors=len(self.spec))
        self._pending_joins = still

    def idle(self) -> list:
        return sorted(p for p, l in self.links.items() if l.state == "idle")

    def _pump(self, timeout: float, on_update=None, on_dead=None):
        """Handle one event (or none within timeout)."""
        try:
            kind, pid, inc, round, payload = self.events.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return
        link = self.links.get(pid)
        current = link is not None and link.inc == inc
        if kind == "update":
            if current and payload["sent_for"] == self.round and on_update is not None:
                on_update(pid, payload)   # sent in this round: its own round number is checked there
            else:
                msg = (f"participant {pid}: update for round {payload['round']} refused, "
                       f"round {payload['round']} is closed (current round {self.round})")
                self._stale.append((pid, payload["round"], msg))
                if current:
                    link.refuse(payload["round"], msg)
        elif kind == "dead" and current and on_dead is not None:
            on_dead(pid, payload)

    def _wait_available(self, need: int, patience: float):
        deadline = time.monotonic() + patience
        while True:
            self._admit()
            connecting = [p for p, l in self.links.items() if l.state == "connecting"]
            if len(self.idle()) >= need and not connecting:
                return
            left = deadline - time.monotonic()
            if left <= 0:
                return
            self._pump(min(left, 0.05))

    # ------------------------------------------------------------------ a round
    def run_round(self, round: int, global_params: dict) -> tuple[dict, RoundReport]:
        t0 = time.monotonic()
        self.round = round
        want = self.expected if (round == 1 and self.expected) else self.min_participants
        self._wait_available(want, self.join_timeout if round == 1 else 0.0)
        available = self.idle()
        if len(available) < self.min_participants:
            raise QuorumError(f"round {round}: {len(available)} participants available "
                              f"({available}), min_participants={self.min_participants}")
        selected = choose(available, self.select, round, self.seed, self.min_participants)
        flat = wire.flatten(global_params)
        # transforms that need the round's cohort on the participant side (secure aggregation)
        self.store.set(f"xform/{round}/participants", ",".join(str(p) for p in selected))
        for pid in selected:
            self.links[pid].start_round(round, flat)
        report = RoundReport(round, selected, [], {}, {}, {},
                             bytes_down=len(selected) * (wire.DOWN_LEN * 8 + flat.numel() * flat.element_size()),
                             available=len(available))
        accepted: dict = {}
        pending = set(selected)

        def on_update(pid, p):
            if pid not in pending:
                return
            pending.discard(pid)
            report.bytes_up += p["bytes"]
            try:
                if p["round"] != round:
                    raise StaleUpdate(f"participant {pid}: update labelled round {p['round']} refused "
                                      f"in round {round}", pid, p["round"])
                update = self._decode(pid, round, p)
                check_update(update, self.spec, participant=pid, round=round, allow_int=True)
            except RejectedUpdate as e:
                report.refused[pid] = str(e)
                self.links[pid].refuse(round, str(e))
                return
            accepted[pid] = update
            report.weights[pid] = p["num_samples"]

        def on_dead(pid, reason):
            if pid in pending:
                pending.discard(pid)
                report.dropped[pid] = reason

        limit = float(self.timeout(round))
        deadline = time.monotonic() + limit   # from the moment the models went out
        while pending and time.monotonic() < deadline:
            self._pump(deadline - time.monotonic(), on_update, on_dead)
        for pid in sorted(pending):
            report.dropped[pid] = f"no update within the round's timeout of {limit:g} s"
        report.stale, self._stale = self._stale, []
        report.reported = sorted(accepted)
        missing = sorted(set(report.dropped) | set(report.refused))
        if len(accepted) < self.min_participants or (missing and self.on_missing == "fail"):
            why = "; ".join(f"{p}: {r}" for p, r in sorted({**report.dropped, **report.refused}.items()))
            raise QuorumError(f"round {round}: {len(accepted)} of {len(selected)} selected participants "
                              f"reported (min_participants={self.min_participants}, "
                              f"on_missing={self.on_missing!r}); nothing was averaged. Missing: {why}")
        ctx = RoundContext(round, None, selected, store=_round_store(self.store, round),
                           timeout=limit, seed=self.seed, dropped=missing)
        updates, weights = self.transform.on_receive(accepted, dict(report.weights), ctx)
        order = sorted(updates)
        new = self.aggregator(global_params, [updates[p] for p in order], [weights[p] for p in order], round)
        report.seconds = time.monotonic() - t0
        return new, report

    def _decode(self, pid, round, p) -> dict:
        try:
            shapes = wire.decode_shapes(p["shapes"], p["n_tensors"])
        except ValueError as e:
            raise RejectedUpdate(f"participant {pid} round {round}: {e}", pid, round)
        total = sum(int(torch.Size(s).numel()) for s in shapes)
        if total != p["flat"].numel() or len(shapes) != len(self.spec):
            raise RejectedUpdate(f"participant {pid} round {round}: update has {len(shapes)} tensors of "
                                 f"{total} values, expected {len(self.spec)} tensors", pid, round)
        return dict(zip(self.spec, wire.unflatten(p["flat"], shapes)))

    def shutdown(self, grace: float):
        """Tell every live participant to stop; a busy one gets its STOP after its late update."""
        for l in self.links.values():
            if l.state in ("idle", "busy", "connecting"):
                l.stop()
        end = time.monotonic() + grace
        for l in self.links.values():
            l.thread.join(max(0.0, end - time.monotonic()))


def _round_store(store, round):
    import torch.distributed as dist
    return dist.PrefixStore(f"xform/{round}", store)
