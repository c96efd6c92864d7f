"""The ClientApp: an Engine participant (runs on whatever torch the SuperNode's Python has)."""

import torch
from flwr.app import Context, Message
from flwr.clientapp import ClientApp

from torchnative.nn.federated.flower import client_app

from .task import SEED, data_fn, model_fn

app = ClientApp()


@app.train()
def train(msg: Message, context: Context) -> Message:
    # the run config arrives with the message, so the inner app is built per call
    cfg = context.run_config
    if cfg["out"]:  # which torch computed this participant's update
        pid = int(context.node_config["partition-id"]) + 1
        with open(f"{cfg['out']}.participant{pid}.torch", "w") as f:
            f.write(torch._C.__file__)
    inner = client_app(model_fn, data_fn(int(cfg["num-participants"]), float(cfg["alpha"])),
                       lr=float(cfg["lr"]), seed=SEED)
    return inner(msg, context)
