"""A participant: joins the run (a new incarnation after every restart), then per round receives
the global model, trains locally on a federated delta, and sends the delta's offset.

Only the delta with the federated lifetime leaves the process (its `export()` is the one that
the lifetime allows); the model is reverted to the global model after every round.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

import torch
import torch.distributed as dist

from ...delta import FederatedDelta
from . import wire
from .errors import FederatedError, PayloadTooLarge, RejectedUpdate
from .transform import RoundContext


@dataclass
class ParticipantRound:
    round: int
    num_samples: int
    bytes_up: int
    status: str = "sent"          # "sent", or "refused: <reason>" when the coordinator said so


def join(store, pid: int, idle_timeout: float):
    inc = store.add(f"fed/incarnation/{pid}", 1)
    slot = store.add("fed/joins", 1)
    store.set(f"fed/join/{slot}", f"{pid}:{inc}")
    prefix = dist.PrefixStore(f"fed/pair/{pid}/{inc}", store)
    return inc, dist.ProcessGroupGloo(prefix, 1, 2, datetime.timedelta(seconds=idle_timeout))


def serve(pg, store, *, pid: int, model, names: list, train, transform, idle_timeout: float,
          timeout: float, seed: int, on_round=None) -> list:
    """Answer the coordinator until it says stop. `train(model, round)` returns the sample count."""
    history: list[ParticipantRound] = []
    inflight = []
    while True:
        try:
            h = wire.recv(pg, 0, torch.empty(wire.DOWN_LEN, dtype=torch.int64), idle_timeout).tolist()
        except Exception as e:
            raise FederatedError(f"participant {pid}: lost the coordinator ({type(e).__name__}: {e})") from e
        magic, round, command, numel = h
        if magic != wire.MAGIC:
            raise FederatedError(f"participant {pid}: malformed message from the coordinator: {h}")
        for w, _ in inflight:  # the coordinator answered, so the previous update was read
            if command != wire.REFUSED:
                w.wait(datetime.timedelta(seconds=idle_timeout))
        inflight = []
        if command == wire.STOP:
            return history
        if command == wire.REFUSED:
            n = numel if numel >= 0 else -numel - 1
            text = bytes(wire.recv(pg, 0, torch.empty(n, dtype=torch.uint8), idle_timeout).tolist()).decode() if n else ""
            for r in history:
                if r.round == round:
                    r.status = f"refused: {text}"
            if numel < 0:
                raise (PayloadTooLarge if "cap" in text else RejectedUpdate)(text, pid, round)
            continue
        if command != wire.TRAIN:
            raise FederatedError(f"participant {pid}: unknown command {command} from the coordinator")
        flat = wire.recv(pg, 0, torch.empty(numel, dtype=_dtype(model, names)), idle_timeout)
        current = {n: _get(model, n) for n in names}
        shapes = [tuple(t.shape) for t in current.values()]
        if sum(t.numel() for t in current.values()) != numel:
            raise FederatedError(f"participant {pid}: the coordinator's model has {numel} values, "
                                 f"this model {sum(t.numel() for t in current.values())}")
        with torch.no_grad():
            for t, v in zip(current.values(), wire.unflatten(flat, shapes)):
                t.copy_(v)
        delta = FederatedDelta(model, names, user=str(pid))
        try:
            torch.manual_seed(seed * 100_003 + round * 1_009 + pid)
            num_samples = int(train(model, round))
            update = delta.export()
        finally:
            delta.close()   # back to the global model: nothing of this round stays behind
        rstore = dist.PrefixStore(f"xform/{round}", store)
        cohort = [int(p) for p in rstore.get("participants").decode().split(",")]
        ctx = RoundContext(round, pid, cohort, num_samples=num_samples, store=rstore,
                           timeout=timeout, seed=seed)
        update = transform.on_send(update, ctx)
        if list(update) != list(names):
            raise FederatedError(f"participant {pid}: the transform changed the update's names")
        dtypes = {t.dtype for t in update.values()}
        if len(dtypes) != 1:
            raise FederatedError(f"participant {pid}: update tensors of mixed dtypes {dtypes}")
        payload = wire.flatten(update)
        shape_t = wire.encode_shapes([tuple(t.shape) for t in update.values()])
        head = wire.up_header(round, pid, num_samples, len(update), shape_t.numel(), payload.numel(),
                              payload.dtype)
        # sent without waiting: the coordinator may refuse after the header and never read the rest
        inflight = [(pg.send([t], 0, 0), t) for t in (head, shape_t, payload) if t.numel()]
        history.append(ParticipantRound(round, num_samples, 8 * (head.numel() + shape_t.numel())
                                        + payload.numel() * payload.element_size()))
        if on_round is not None:
            on_round(history[-1], update)


def _get(model, name):
    mod, _, attr = name.rpartition(".")
    return getattr(model.get_submodule(mod) if mod else model, attr)


def _dtype(model, names):
    dts = {_get(model, n).dtype for n in names}
    if len(dts) != 1:
        raise FederatedError(f"covered tensors have mixed dtypes {dts}; cast the model first")
    return dts.pop()
