"""An Engine participant as a Flower ``ClientApp``: per training message it loads the global
model, trains locally through the engine's own loop on a federated delta, and replies with the
delta (what travels in the engine too) and its sample count.

The participant id is the node's ``partition-id`` + 1, the rank the same participant has in an
Engine run, and local training is seeded as the engine seeds it; so the same experiment gives the
same deltas through either runtime.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from flwr.app import Context, Message, MetricRecord, RecordDict
from flwr.clientapp import ClientApp

from ....delta import FederatedDelta
from ..local import train_local
from ..transform import RoundContext, Transform
from .records import from_record, to_record


def round_seed(seed: int, round: int, pid: int) -> int:
    """The torch seed a participant's local training starts from in round ``round`` (the
    engine's formula)."""
    return seed * 100_003 + round * 1_009 + pid


def client_app(model_fn, data_fn, *, names=None, lr: float = 0.01, optimizer=None, loss=None,
               epochs: int = 1, proximal_mu: float = 0.0, seed: int = 0,
               transform: Transform | None = None) -> ClientApp:
    """``model_fn()`` builds the model; ``data_fn(pid)`` returns that participant's batches."""
    app = ClientApp()
    loss = loss if loss is not None else F.cross_entropy
    transform = transform if transform is not None else Transform()

    @app.train()
    def train(msg: Message, context: Context) -> Message:
        pid = int(context.node_config["partition-id"]) + 1
        round = int(msg.content["config"]["server-round"])
        model = model_fn()
        covered = list(names) if names is not None else [n for n, p in model.named_parameters() if p.requires_grad]
        state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
        with torch.no_grad():
            for n, v in from_record(msg.content["arrays"], covered).items():
                state[n].copy_(v)
        make_opt = optimizer if optimizer is not None else (lambda ps: torch.optim.SGD(ps, lr=lr))
        anchor = {n: p.detach().clone() for n, p in model.named_parameters()} if proximal_mu > 0 else {}
        delta = FederatedDelta(model, covered, user=str(pid))
        try:
            torch.manual_seed(round_seed(seed, round, pid))
            n = train_local(model, data_fn(pid), loss_fn=loss, make_optimizer=make_opt, epochs=epochs,
                            proximal_mu=proximal_mu, anchor=anchor)
            update = delta.export()
        finally:
            delta.close()
        update = transform.on_send(update, RoundContext(round, pid, [], num_samples=n, seed=seed))
        content = RecordDict({"arrays": to_record(update),
                              "metrics": MetricRecord({"num-examples": n, "participant": pid})})
        return Message(content=content, reply_to=msg)

    return app
