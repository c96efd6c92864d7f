"""Our aggregators inside a Flower ``ServerApp``: a Flower strategy whose ``aggregate_train``
hands the replies' deltas to a torchnative aggregator (FedAvg, FedAdam, Krum, ...), in
participant order, with the sample counts as weights, through the same per-round Transform the
engine's coordinator applies."""

from __future__ import annotations

import torch
from flwr.app import ArrayRecord, Context, MetricRecord
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import FedAvg as _FlowerFedAvg

from ..transform import RoundContext, Transform
from .records import from_record, to_record


class AggregatorStrategy(_FlowerFedAvg):
    """Flower's node sampling and messaging; our aggregation."""

    def __init__(self, aggregator, *, transform: Transform | None = None, **flower_kwargs):
        super().__init__(**flower_kwargs)
        self.aggregator = aggregator
        self.transform = transform if transform is not None else Transform()
        self.global_params: dict | None = None

    def configure_train(self, server_round: int, arrays: ArrayRecord, config, grid: Grid):
        self.global_params = from_record(arrays)
        self._sampled = None
        messages = list(super().configure_train(server_round, arrays, config, grid))
        self._sampled = [m.metadata.dst_node_id for m in messages]
        return messages

    def aggregate_train(self, server_round: int, replies):
        replies = list(replies)
        valid = [m for m in replies if not m.has_error()]
        if not valid:
            raise RuntimeError(f"round {server_round}: no participant replied "
                               f"({len(replies)} errors: {[m.error.reason for m in replies]})")
        updates, weights = {}, {}
        for msg in valid:
            metrics = msg.content["metrics"]
            pid = int(metrics["participant"])
            if pid in updates:
                raise RuntimeError(f"round {server_round}: two replies from participant {pid}")
            updates[pid] = from_record(msg.content["arrays"], list(self.global_params))
            weights[pid] = int(metrics["num-examples"])
        ctx = RoundContext(server_round, None, sorted(updates), dropped=[])
        updates, weights = self.transform.on_receive(updates, weights, ctx)
        order = sorted(updates)
        new = self.aggregator(self.global_params, [updates[p] for p in order], [weights[p] for p in order],
                              server_round)
        metrics = MetricRecord({"participants": len(valid), "num-examples": sum(int(w) for w in weights.values())})
        return to_record(new), metrics


def server_app(model_fn, aggregator, *, rounds: int, names=None, min_nodes: int = 2,
               transform: Transform | None = None, on_done=None) -> ServerApp:
    """``model_fn()`` gives the initial global model; ``on_done(state_dict)`` receives the final
    global parameters (e.g. to save them)."""
    app = ServerApp()

    @app.main()
    def main(grid: Grid, context: Context) -> None:
        model = model_fn()
        covered = list(names) if names is not None else [n for n, p in model.named_parameters() if p.requires_grad]
        state = {**dict(model.named_parameters()), **dict(model.named_buffers())}
        strategy = AggregatorStrategy(aggregator, transform=transform, fraction_train=1.0,
                                      fraction_evaluate=0.0, min_train_nodes=min_nodes,
                                      min_available_nodes=min_nodes)
        result = strategy.start(grid=grid, initial_arrays=to_record({n: state[n] for n in covered}),
                                num_rounds=int(context.run_config.get("num-server-rounds", rounds)))
        final = from_record(result.arrays, covered)
        if on_done is not None:
            on_done(final)

    return app
