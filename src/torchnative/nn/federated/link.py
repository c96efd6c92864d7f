"""The coordinator's end of one participant incarnation: a two-rank gloo process group and a
thread that sends the round's global model and receives the update.

A dead or silent participant fails only its own link, never a collective the others are in. A
link whose participant is slower than the round stays busy; its update, when it comes, is handed
to the coordinator with its round number, and the coordinator refuses it as stale.
"""

from __future__ import annotations

import datetime
import queue
import threading

import torch
import torch.distributed as dist

from . import wire
from .errors import PayloadTooLarge

_STOP = object()


class Link:
    def __init__(self, pid: int, inc: int, store, events: queue.Queue, *, late_timeout: float,
                 max_payload_bytes: int, max_tensors: int):
        self.pid, self.inc = pid, inc
        self.state = "connecting"     # -> idle <-> busy; dead at the end
        self.reason = ""
        self._store, self._events = store, events
        self._late, self._cap, self._max_tensors = late_timeout, max_payload_bytes, max_tensors
        self._inbox: queue.Queue = queue.Queue()
        self.pg = None
        self.thread = threading.Thread(target=self._run, name=f"federated-link-{pid}.{inc}", daemon=True)
        self.thread.start()

    # ------------------------------------------------------------------ from the coordinator
    def start_round(self, round: int, flat: torch.Tensor) -> None:
        self.state = "busy"
        self._inbox.put(("round", round, flat))

    def refuse(self, round: int, reason: str) -> None:
        self._inbox.put(("refuse", round, reason))

    def stop(self) -> None:
        self._inbox.put(_STOP)

    # ------------------------------------------------------------------ the thread
    def _dead(self, reason: str, round=None):
        self.state, self.reason = "dead", reason
        self._events.put(("dead", self.pid, self.inc, round, reason))

    def _run(self):
        try:
            prefix = dist.PrefixStore(f"fed/pair/{self.pid}/{self.inc}", self._store)
            self.pg = dist.ProcessGroupGloo(prefix, 0, 2, datetime.timedelta(seconds=self._late))
        except Exception as e:  # the participant died between joining and connecting
            return self._dead(f"could not connect: {type(e).__name__}: {e}")
        self.state = "idle"
        self._events.put(("ready", self.pid, self.inc, None, None))
        while True:
            cmd = self._inbox.get()
            try:
                if cmd is _STOP:
                    wire.send(self.pg, 1, wire.down_header(0, wire.STOP, 0), self._late)
                    self.state = "stopped"
                    return
                if cmd[0] == "refuse":
                    self._send_refusal(cmd[1], cmd[2], fatal=False)
                    continue
                _, round, flat = cmd
                wire.send(self.pg, 1, wire.down_header(round, wire.TRAIN, flat.numel()), self._late)
                wire.send(self.pg, 1, flat, self._late)
                got = self._receive(round)
                self.state = "idle"
                self._events.put(("update", self.pid, self.inc, None, got))
            except PayloadTooLarge as e:
                try:
                    self._send_refusal(e.round or 0, str(e), fatal=True)
                finally:
                    self._dead(str(e), round=e.round)
                return
            except Exception as e:
                return self._dead(f"{type(e).__name__}: {e}", round=cmd[1] if isinstance(cmd, tuple) else None)

    def _send_refusal(self, round: int, reason: str, fatal: bool):
        text = torch.tensor(list(reason.encode()), dtype=torch.uint8)
        n = text.numel()
        wire.send(self.pg, 1, wire.down_header(round, wire.REFUSED, -n - 1 if fatal else n), self._late)
        if n:
            wire.send(self.pg, 1, text, self._late)

    def _receive(self, expected_round: int) -> dict:
        h = wire.recv(self.pg, 1, torch.empty(wire.UP_LEN, dtype=torch.int64), self._late).tolist()
        magic, round, pid, num_samples, n_tensors, shape_len, numel, code = h
        if magic != wire.MAGIC or pid != self.pid:
            raise ValueError(f"malformed update header from participant {self.pid}: {h}")
        if not 0 <= code < len(wire.DTYPES):
            raise ValueError(f"participant {self.pid} sent an unknown dtype code {code}")
        dtype = wire.DTYPES[code]
        nbytes = numel * torch.empty(0, dtype=dtype).element_size()
        if numel < 0 or nbytes > self._cap:
            raise PayloadTooLarge(f"participant {self.pid} round {round}: payload of {nbytes} bytes "
                                  f"exceeds the cap of {self._cap} bytes", self.pid, round)
        if not 0 <= n_tensors <= self._max_tensors or not 0 <= shape_len <= n_tensors * (1 + wire.MAX_NDIM):
            raise PayloadTooLarge(f"participant {self.pid} round {round}: header announces {n_tensors} "
                                  f"tensors ({shape_len} shape values)", self.pid, round)
        shape_t = torch.empty(shape_len, dtype=torch.int64)
        flat = torch.empty(numel, dtype=dtype)
        for t in (shape_t, flat):
            if t.numel():   # the participant sends no empty message
                wire.recv(self.pg, 1, t, self._late)
        return {"round": round, "num_samples": num_samples, "n_tensors": n_tensors,
                "shapes": shape_t, "flat": flat, "bytes": wire.UP_LEN * 8 + shape_len * 8 + nbytes,
                "sent_for": expected_round}
