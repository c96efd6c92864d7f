"""`Engine`: one object, the same code on every process of a run.

Rank 0 coordinates (hosts the run's TCPStore, selects, aggregates, holds the global model);
every other rank is a participant that trains on its own data. Ranks and the address come from
the arguments or from torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT).
"""

from __future__ import annotations

import datetime
import numbers
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F

from .aggregators import Aggregator, FedAvg
from .coordinator import Coordinator
from .participant import join, serve
from .local import train_local
from .transform import Transform
from .validate import spec_of

ON_MISSING = ("proceed", "fail")


class Engine:
    def __init__(self, model, *, rounds: int = 10, aggregator=None, select=1.0,
                 min_participants: int = 1, on_missing: str = "proceed", timeout: float = 60.0,
                 late_timeout: float | None = None, idle_timeout: float | None = None,
                 join_timeout: float | None = None, max_payload_bytes: int = 16 * 2**20,
                 names=None, lr: float = 0.01, optimizer=None, loss=None, epochs: int = 1,
                 transform: Transform | None = None, seed: int = 0, rank: int | None = None,
                 world_size: int | None = None, address: tuple | None = None, on_round=None,
                 privacy_delta: float = 1e-5):
        if not isinstance(model, nn.Module):
            raise TypeError(f"Engine: model must be a torch.nn.Module, got {type(model).__name__}")
        if aggregator is not None and not isinstance(aggregator, Aggregator):
            raise TypeError("Engine: aggregator must be an Aggregator instance (FedAvg(), ...), "
                            f"got {aggregator!r}")
        for name, value in (("rounds", rounds), ("epochs", epochs),
                            ("min_participants", min_participants)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TypeError(f"Engine: {name} must be an int, got {type(value).__name__}")
        if on_missing not in ON_MISSING:
            raise ValueError(f"on_missing must be one of {ON_MISSING}, got {on_missing!r}")
        if rounds < 1 or epochs < 1 or min_participants < 1:
            raise ValueError("rounds, epochs and min_participants must be >= 1")
        # a number, or round -> seconds (a first round of cold processes may need longer)
        self.round_timeout = timeout if callable(timeout) else (lambda r, t=float(timeout): t)
        timeout = max(float(self.round_timeout(r)) for r in (1, 2))
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0 seconds, got {timeout}")
        self.model = model
        self.rounds, self.epochs, self.seed = int(rounds), int(epochs), int(seed)
        self.aggregator = aggregator if aggregator is not None else FedAvg()
        self.transform = transform if transform is not None else Transform()
        self.select, self.min_participants, self.on_missing = select, int(min_participants), on_missing
        self.timeout = float(timeout)
        self.late_timeout = float(late_timeout) if late_timeout is not None else 4 * self.timeout
        self.idle_timeout = float(idle_timeout) if idle_timeout is not None else 10 * self.timeout
        self.join_timeout = float(join_timeout) if join_timeout is not None else 2 * self.timeout
        self.max_payload_bytes = int(max_payload_bytes)
        self.names = list(names) if names is not None else [n for n, p in model.named_parameters() if p.requires_grad]
        if not self.names:
            raise ValueError("the federated delta covers no tensors (no trainable parameters, no names)")
        self.lr = float(lr)
        self.make_optimizer = optimizer if optimizer is not None else (lambda ps: torch.optim.SGD(ps, lr=self.lr))
        self.loss = loss if loss is not None else F.cross_entropy
        self.rank = int(rank if rank is not None else os.environ.get("RANK", 0))
        ws = world_size if world_size is not None else os.environ.get("WORLD_SIZE")
        self.world_size = int(ws) if ws is not None else None
        if address is None:
            address = (os.environ.get("MASTER_ADDR", "127.0.0.1"), int(os.environ.get("MASTER_PORT", 29500)))
        self.address = (address[0], int(address[1]))
        self.on_round = on_round
        self.history: list = []
        if not 0 < privacy_delta < 1:
            raise ValueError(f"privacy_delta must lie in (0, 1), got {privacy_delta}")
        self.privacy_delta = float(privacy_delta)
        self.accountant = None  # an RDPAccountant on the coordinator when the transform is DP

    @property
    def is_coordinator(self) -> bool:
        return self.rank == 0

    def global_params(self) -> dict:
        named = {**dict(self.model.named_parameters()), **dict(self.model.named_buffers())}
        return {n: named[n].detach().clone() for n in self.names}

    def participate(self, batches=None, *, weight: int | None = None, train=None):
        """Coordinator: run every round, return the round reports. Participant: serve rounds
        until the coordinator stops, return what was sent per round. `train(model, round)`
        replaces the built-in local loop and returns the sample count."""
        if self.is_coordinator:
            if batches is not None or train is not None:
                raise ValueError("rank 0 is the coordinator and does not train: pass no batches there")
            return self._coordinate()
        if train is None:
            if batches is None:
                raise ValueError(f"participant {self.rank} needs batches (or train=)")
            train = self._default_train(batches, weight)
        return self._participate(train)

    # ------------------------------------------------------------------ roles
    def _store(self, master: bool):
        return dist.TCPStore(self.address[0], self.address[1], is_master=master,
                             timeout=datetime.timedelta(seconds=self.join_timeout if master else self.idle_timeout),
                             wait_for_workers=False)

    def _coordinate(self):
        store = self._store(True)
        self._store_ref = store
        self.aggregator.reset()
        expected = self.world_size - 1 if self.world_size else None
        coord = Coordinator(store, spec=spec_of(self.global_params()), expected=expected,
                            aggregator=self.aggregator, transform=self.transform, select=self.select,
                            min_participants=self.min_participants, on_missing=self.on_missing,
                            timeout=self.round_timeout, late_timeout=self.late_timeout,
                            join_timeout=self.join_timeout, max_payload_bytes=self.max_payload_bytes,
                            seed=self.seed)
        self.history = []
        cost = self.transform.privacy_cost()
        if cost is not None:
            from .privacy import RDPAccountant
            self.accountant = RDPAccountant()
        try:
            for r in range(1, self.rounds + 1):
                new, report = coord.run_round(r, self.global_params())
                if cost is not None:
                    self._account(report, *cost)
                with torch.no_grad():
                    named = {**dict(self.model.named_parameters()), **dict(self.model.named_buffers())}
                    for n, v in new.items():
                        named[n].copy_(v)
                self.history.append(report)
                if self.on_round is not None:
                    self.on_round(report, self.model)
        finally:
            coord.shutdown(grace=min(self.timeout, 10.0))
        return self.history

    def _account(self, report, noise_multiplier: float, amplified: bool) -> None:
        # one round = one step of the subsampled Gaussian mechanism; a fixed-size random cohort
        # is accounted as sampling at rate cohort / available, as DP-FedAvg does
        q = len(report.selected) / report.available if amplified else 1.0
        self.accountant.step(noise_multiplier, q)
        report.epsilon, _ = self.accountant.get_epsilon(self.privacy_delta)
        report.delta = self.privacy_delta

    @property
    def privacy(self) -> tuple[float, float] | None:
        """The run's (epsilon, delta) so far (coordinator, DP transform), else None."""
        if self.accountant is None:
            return None
        return self.accountant.get_epsilon(self.privacy_delta)[0], self.privacy_delta

    def _participate(self, train):
        store = self._store(False)
        self._store_ref = store
        inc, pg = join(store, self.rank, self.idle_timeout)
        self.incarnation = inc
        self.history = serve(pg, store, pid=self.rank, model=self.model, names=self.names, train=train,
                             transform=self.transform, idle_timeout=self.idle_timeout,
                             timeout=self.timeout, seed=self.seed, on_round=self.on_round)
        return self.history

    def _default_train(self, batches, weight):
        def train(model, round):
            anchor = {n: p.detach().clone() for n, p in model.named_parameters()} if self.aggregator.proximal_mu > 0 else {}
            n = train_local(model, batches, loss_fn=self.loss, make_optimizer=self.make_optimizer,
                            epochs=self.epochs, proximal_mu=self.aggregator.proximal_mu, anchor=anchor)
            return n if weight is None else weight
        return train
