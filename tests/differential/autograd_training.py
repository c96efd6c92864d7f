"""A tiny MLP trained a few steps with each torch.optim optimizer, for-loop and foreach paths,
run identically on upstream torch and on ours (each in its own process).

``python autograd_training.py DTYPE`` prints one JSON object: "<optimizer>/<foreach>" ->
[losses per step, final parameters]. Data and initial weights come from seeded numpy generators.
"""

from __future__ import annotations

import json
import sys

import numpy as np

OPTIMIZERS = [
    ("sgd", "SGD", dict(lr=0.1)),
    ("sgd_momentum_wd", "SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
    ("sgd_nesterov", "SGD", dict(lr=0.1, momentum=0.9, nesterov=True)),
    ("adam", "Adam", dict(lr=0.01)),
    ("adam_amsgrad", "Adam", dict(lr=0.01, amsgrad=True)),
    ("adamw", "AdamW", dict(lr=0.01, weight_decay=0.1)),
    ("rmsprop", "RMSprop", dict(lr=0.01, momentum=0.5)),
    ("adagrad", "Adagrad", dict(lr=0.1)),
]
STEPS = 3


def run(torch, dtype):
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((16, 8))).to(dtype)
    y = torch.from_numpy(rng.integers(0, 3, 16))
    out = {}
    for name, cls, kw in OPTIMIZERS:
        for foreach in (False, True):
            r = np.random.default_rng(1)
            params = [torch.from_numpy(r.standard_normal(s) * 0.3).to(dtype).requires_grad_()
                      for s in [(8, 6), (6,), (6, 3), (3,)]]
            opt = getattr(torch.optim, cls)(params, foreach=foreach, **kw)
            losses = []
            for _ in range(STEPS):
                opt.zero_grad()
                h = torch.tanh(x @ params[0] + params[1])
                logits = h @ params[2] + params[3]
                loss = -torch.log_softmax(logits, 1).gather(1, y[:, None]).mean()
                loss.backward()
                opt.step()
                losses.append(loss.item())
            out[f"{name}/{foreach}"] = [losses, [p.detach().double().reshape(-1).tolist()
                                                 for p in params]]
    out["cnn_batchnorm/sgd_momentum"] = _cnn(torch, dtype)
    return out


def _cnn(torch, dtype):
    """conv -> batch norm (train mode) -> relu -> max pool -> linear, SGD with momentum."""
    nn = torch.nn
    net = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1, dtype=dtype), nn.BatchNorm2d(4, dtype=dtype),
                        nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 4 * 4, 3,
                                                                            dtype=dtype))
    r = np.random.default_rng(2)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.from_numpy(r.standard_normal(tuple(p.shape)) * 0.2))
    x = torch.from_numpy(r.standard_normal((5, 2, 8, 8))).to(dtype)
    y = torch.from_numpy(r.integers(0, 3, 5))
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = -torch.log_softmax(net(x), 1).gather(1, y[:, None]).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return [losses, [p.detach().double().reshape(-1).tolist() for p in net.parameters()] +
            [net[1].running_mean.double().tolist(), net[1].running_var.double().tolist()]]


if __name__ == "__main__":
    import torch

    print(json.dumps(run(torch, getattr(torch, sys.argv[1]))))
