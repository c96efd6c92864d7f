"""The ServerApp: a torchnative aggregator inside Flower; saves the final global model if asked."""

import json

from flwr.app import Context
from flwr.serverapp import Grid, ServerApp

from torchnative.nn.federated import AGGREGATORS
from torchnative.nn.federated.flower import server_app

from .task import model_fn

app = ServerApp()


@app.main()
def main(grid: Grid, context: Context) -> None:
    cfg = context.run_config

    def save(state):
        if cfg["out"]:
            with open(cfg["out"], "w") as f:
                json.dump({k: v.reshape(-1).tolist() for k, v in state.items()}, f)

    inner = server_app(model_fn, AGGREGATORS[cfg["aggregator"]](), rounds=int(cfg["num-server-rounds"]),
                       min_nodes=int(cfg["num-participants"]), on_done=save)
    inner(grid, context)
