"""Rounds in one process, for sweeps that would be too slow as worlds of processes: the same
steps as the engine without the transport (the global model written into the participant's
model, a FederatedDelta, the seeded local training, the Transform, the validation by name, the
aggregator), participants in id order. The engine's transport is tested on its own."""

from __future__ import annotations

import torch

from ...delta import FederatedDelta
from .local import train_local
from .transform import RoundContext, Transform
from .validate import check_update, spec_of


def simulate(model, data: dict, *, rounds: int, aggregator, transform: Transform | None = None,
             lr: float = 0.1, epochs: int = 1, seed: int = 0, loss=None, on_round=None) -> None:
    """`data`: participant id -> batches. `on_round(round, model)` after each aggregation."""
    import torch.nn.functional as F
    transform = transform or Transform()
    loss = loss or F.cross_entropy
    names = [n for n, p in model.named_parameters() if p.requires_grad]
    params = dict(model.named_parameters())
    aggregator.reset()
    for r in range(1, rounds + 1):
        glob = {n: params[n].detach().clone() for n in names}
        cohort = sorted(data)
        updates, weights = {}, {}
        for pid in cohort:
            delta = FederatedDelta(model, names, user=str(pid))
            try:
                torch.manual_seed(seed * 100_003 + r * 1_009 + pid)
                anchor = dict(glob) if aggregator.proximal_mu > 0 else {}
                n = train_local(model, data[pid], loss_fn=loss,
                                make_optimizer=lambda ps: torch.optim.SGD(ps, lr=lr), epochs=epochs,
                                proximal_mu=aggregator.proximal_mu, anchor=anchor)
                up = delta.export()
            finally:
                delta.close()
            up = transform.on_send(up, RoundContext(r, pid, cohort, num_samples=n, seed=seed))
            check_update(up, spec_of(glob), participant=pid, round=r)
            updates[pid], weights[pid] = up, n
        updates, weights = transform.on_receive(updates, weights, RoundContext(r, None, cohort, seed=seed))
        order = sorted(updates)
        new = aggregator(glob, [updates[p] for p in order], [weights[p] for p in order], r)
        with torch.no_grad():
            for n, v in new.items():
                params[n].copy_(v)
        if on_round is not None:
            on_round(r, model)
