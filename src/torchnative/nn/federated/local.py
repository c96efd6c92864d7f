"""Local training on a participant: the user's batches, loss and optimizer, for some epochs,
with FedProx's proximal term when the aggregator asks for one. Returns the sample count."""

from __future__ import annotations

import torch


def train_local(model, batches, *, loss_fn, make_optimizer, epochs: int, proximal_mu: float,
                anchor: dict) -> int:
    params = [p for p in model.parameters() if p.requires_grad]
    opt = make_optimizer(params)
    named = dict(model.named_parameters())
    seen = 0
    model.train()
    for epoch in range(epochs):
        count = 0
        for x, y in batches:
            opt.zero_grad()
            loss = loss_fn(model(x), y)
            if proximal_mu > 0:
                prox = sum(((named[n] - a) ** 2).sum() for n, a in anchor.items() if n in named)
                loss = loss + proximal_mu / 2 * prox
            loss.backward()
            opt.step()
            count += len(y)
        if epoch == 0:
            seen = count
    if seen == 0:
        raise ValueError("local training saw no samples (empty batches)")
    return seen
