"""Ordinary training programs, written as a user writes them, run identically on upstream torch and
on ours (each in its own process) by tests/test_training.py.

scikit-learn's bundled digits (1,797 8x8 images, offline), standardised, split 1,437 / 360; a
``DataLoader`` over a ``TensorDataset`` with a seeded ``torch.Generator`` and ``shuffle=True``;
``nn.Module`` classes initialised by torch's own initialisers under ``torch.manual_seed``;
``model.train()`` / ``model.eval()``; accuracy and loss on the held-out part under
``torch.no_grad()``; an ``lr_scheduler`` stepped per epoch (OneCycleLR: per batch).

- ``mlp_*``: an MLP, with SGD (momentum, Nesterov, weight decay) + StepLR or CosineAnnealingLR,
  AdamW + ExponentialLR, RMSprop + MultiStepLR, Adagrad + LambdaLR;
- ``cnn_*``: Conv2d, BatchNorm2d, ReLU, MaxPool2d, Dropout (train mode: the masks come from the
  seeded generator and must be upstream's bits), Linear, cross-entropy with label smoothing;
  Adam + OneCycleLR, fused AdamW + ReduceLROnPlateau;
- ``clip_accum``: gradient clipping (clip_grad_norm_), gradient accumulation over two
  micro-batches, Dropout; run straight through, and again saved with torch.save after two epochs
  (model, optimizer, scheduler, both generators' states), rebuilt from scratch, torch.load-ed and
  resumed (``clip_accum_resumed``); the resumed run must equal the uninterrupted one bit for bit.

``python training_programs.py DTYPE [--controls lr0 flip] [--save PATH] [--load PATH]`` prints one
JSON object: program -> {"losses" (per step), "lrs" (per epoch), "eval_loss", "correct"
(per epoch), "dropout" (per Dropout call: elements zeroed, sum of their indices), "state" (final
state_dict, flattened)}. float64 runs start from the same float32
initial weights and data (cast up), for deriving the tolerance from upstream's own error.
Controls (for ours): ``lr0`` trains with learning rate 0, ``flip`` negates every gradient; each
reruns the CONTROLLED programs under "<control>/<program>".
``--save PATH`` writes the clip_accum checkpoint there; ``--load PATH`` adds
``clip_accum_resumed_from_file``, resumed from PATH's checkpoint instead (ours resuming upstream's).
"""

from __future__ import annotations

import argparse
import io
import json

import numpy as np


def digits(torch, dtype):
    from sklearn.datasets import load_digits

    d = load_digits()
    x = d.data.astype(np.float64)
    x = (x - x.mean(0)) / (x.std(0) + 1e-3)
    x = torch.from_numpy(x.astype(np.float32)).to(dtype)  # the float32 data, widened for float64
    y = torch.from_numpy(d.target.astype(np.int64))
    return (x[:1437], y[:1437]), (x[1437:], y[1437:])


def models(torch):
    nn = torch.nn

    class MLP(nn.Module):
        def __init__(self, hidden=48, p_drop=0.0):
            super().__init__()
            self.fc1 = nn.Linear(64, hidden)
            self.fc2 = nn.Linear(hidden, hidden)
            self.out = nn.Linear(hidden, 10)
            self.drop = nn.Dropout(p_drop)

        def forward(self, x):
            x = torch.relu(self.fc1(x))
            x = self.drop(torch.relu(self.fc2(x)))
            return self.out(x)

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2d(1, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(),
                nn.MaxPool2d(2),
                nn.Conv2d(8, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                nn.MaxPool2d(2))
            self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.25), nn.Linear(64, 10))

        def forward(self, x):
            return self.head(self.features(x.view(-1, 1, 8, 8)))

    return MLP, CNN


# ------------------------------------------------------------------------------------ programs
# Each: (model factory, optimizer factory, scheduler factory, epochs, batch size, options).

def programs(torch):
    optim, sched = torch.optim, torch.optim.lr_scheduler
    MLP, CNN = models(torch)
    return {
        "mlp_sgd_nesterov_steplr": dict(
            model=lambda: MLP(), epochs=3, batch=32,
            opt=lambda ps, lr: optim.SGD(ps, lr=lr(0.05), momentum=0.9, nesterov=True,
                                         weight_decay=5e-4, foreach=False),
            sched=lambda o, steps: sched.StepLR(o, step_size=1, gamma=0.5)),
        "mlp_sgd_nesterov_cosine_foreach": dict(
            model=lambda: MLP(), epochs=3, batch=32,
            opt=lambda ps, lr: optim.SGD(ps, lr=lr(0.05), momentum=0.9, nesterov=True,
                                         weight_decay=5e-4, foreach=True),
            sched=lambda o, steps: sched.CosineAnnealingLR(o, T_max=3)),
        "mlp_adamw_exponential_foreach": dict(
            model=lambda: MLP(p_drop=0.1), epochs=2, batch=64,
            opt=lambda ps, lr: optim.AdamW(ps, lr=lr(3e-3), weight_decay=0.05, foreach=True),
            sched=lambda o, steps: sched.ExponentialLR(o, gamma=0.7)),
        "mlp_rmsprop_multistep": dict(
            model=lambda: MLP(), epochs=2, batch=64,
            opt=lambda ps, lr: optim.RMSprop(ps, lr=lr(1e-3), momentum=0.5, weight_decay=1e-4,
                                             foreach=False),
            sched=lambda o, steps: sched.MultiStepLR(o, milestones=[1], gamma=0.3)),
        "mlp_adagrad_lambda": dict(
            model=lambda: MLP(), epochs=2, batch=64,
            opt=lambda ps, lr: optim.Adagrad(ps, lr=lr(0.02), lr_decay=1e-3, foreach=True),
            sched=lambda o, steps: sched.LambdaLR(o, lambda e: 1.0 / (1 + e))),
        "cnn_adam_onecycle": dict(
            model=CNN, epochs=2, batch=64, smoothing=0.1, per_batch_sched=True,
            opt=lambda ps, lr: optim.Adam(ps, lr=lr(1e-3)),
            sched=lambda o, steps: sched.OneCycleLR(o, max_lr=o.param_groups[0]["lr"] * 10,
                                                    total_steps=steps)),
        "cnn_adamw_fused_plateau": dict(
            model=CNN, epochs=3, batch=64, smoothing=0.1, plateau=True,
            opt=lambda ps, lr: optim.AdamW(ps, lr=lr(4e-3), weight_decay=0.01, fused=True),
            sched=lambda o, steps: sched.ReduceLROnPlateau(o, factor=0.5, patience=0,
                                                           threshold=0.2)),
        "clip_accum": dict(
            model=lambda: MLP(p_drop=0.2), epochs=4, batch=32, clip=1.0, accumulate=2,
            opt=lambda ps, lr: optim.SGD(ps, lr=lr(0.1), momentum=0.9, foreach=True),
            sched=lambda o, steps: sched.StepLR(o, step_size=2, gamma=0.5)),
    }


def watch_dropout(torch, model, record):
    """Record, per Dropout call in train mode, how many elements it zeroed, the sum of their flat
    indices, and (hex-packed bits) which elements it zeroed and which inputs were zero already:
    where an input is zero on either side the mask bit is unobservable (an activation that lands on
    zero on one CPU and just above it on another), everywhere else it must be upstream's bit."""
    import numpy as np

    def hook(module, inputs, output):
        if module.training and module.p > 0:
            zero_in = (inputs[0] == 0).reshape(-1)
            dropped = ((output == 0) & (inputs[0] != 0)).reshape(-1)
            idx = dropped.nonzero().reshape(-1)
            record.append([int(idx.numel()), int(idx.sum()),
                           np.packbits(dropped.numpy()).tobytes().hex(),
                           np.packbits(zero_in.numpy()).tobytes().hex()])

    for m in model.modules():
        if isinstance(m, torch.nn.Dropout):
            m.register_forward_hook(hook)


def train(torch, name, spec, dtype, control=None, resume_at=None, save=None, load=None):
    F = torch.nn.functional
    from torch.utils.data import DataLoader, TensorDataset

    (xtr, ytr), (xte, yte) = digits(torch, dtype)
    torch.manual_seed(0)
    model = spec["model"]().to(dtype)
    masks = []
    watch_dropout(torch, model, masks)
    lr = (lambda v: 0.0) if control == "lr0" else (lambda v: v)
    gen = torch.Generator().manual_seed(1)
    loader = DataLoader(TensorDataset(xtr, ytr), batch_size=spec["batch"], shuffle=True,
                        generator=gen)
    steps_per_epoch = len(loader) // spec.get("accumulate", 1)
    opt = spec["opt"](model.parameters(), lr)
    sched = spec["sched"](opt, spec["epochs"] * steps_per_epoch)
    out = {"losses": [], "lrs": [], "eval_loss": [], "correct": []}
    smoothing = spec.get("smoothing", 0.0)
    accumulate = spec.get("accumulate", 1)

    for epoch in range(spec["epochs"]):
        if resume_at is not None and epoch == resume_at:
            # a user's checkpoint: everything, written, then a fresh process-like rebuild
            buf = io.BytesIO()
            torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(),
                        "scheduler": sched.state_dict(), "rng": torch.get_rng_state(),
                        "loader_rng": gen.get_state(), "epoch": epoch}, buf)
            if save is not None:
                with open(save, "wb") as f:
                    f.write(buf.getvalue())
            if load is not None:
                with open(load, "rb") as f:
                    buf = io.BytesIO(f.read())
            buf.seek(0)
            ckpt = torch.load(buf, weights_only=True)
            torch.manual_seed(123)  # the rebuild draws fresh weights; the checkpoint replaces them
            model = spec["model"]().to(dtype)
            watch_dropout(torch, model, masks)
            model.load_state_dict(ckpt["model"])
            opt = spec["opt"](model.parameters(), lr)
            opt.load_state_dict(ckpt["optimizer"])
            sched = spec["sched"](opt, spec["epochs"] * steps_per_epoch)
            sched.load_state_dict(ckpt["scheduler"])
            torch.set_rng_state(ckpt["rng"])
            gen = torch.Generator()
            gen.set_state(ckpt["loader_rng"])
            loader = DataLoader(TensorDataset(xtr, ytr), batch_size=spec["batch"], shuffle=True,
                                generator=gen)
        model.train()
        opt.zero_grad()
        for i, (xb, yb) in enumerate(loader):
            loss = F.cross_entropy(model(xb), yb, label_smoothing=smoothing)
            (loss / accumulate).backward()
            out["losses"].append(loss.item())
            if (i + 1) % accumulate:
                continue
            if control == "flip":
                for p in model.parameters():
                    p.grad.neg_()
            if "clip" in spec:
                torch.nn.utils.clip_grad_norm_(model.parameters(), spec["clip"])
            opt.step()
            opt.zero_grad()
            if spec.get("per_batch_sched"):
                sched.step()
        model.eval()
        with torch.no_grad():
            logits = model(xte)
            val = F.cross_entropy(logits, yte).item()
            out["eval_loss"].append(val)
            out["correct"].append(int((logits.argmax(1) == yte).sum()))
        if spec.get("plateau"):
            sched.step(val)
        elif not spec.get("per_batch_sched"):
            sched.step()
        out["lrs"].append(opt.param_groups[0]["lr"])
    out["dropout"] = masks
    out["state"] = {k: v.double().reshape(-1).tolist() if v.is_floating_point()
                    else v.reshape(-1).tolist() for k, v in model.state_dict().items()}
    return out


CONTROLLED = ("mlp_sgd_nesterov_steplr", "cnn_adam_onecycle", "clip_accum")


def run(torch, dtype, controls=(), save=None, load=None):
    """Every program, clip_accum resumed from its checkpoint (and from ``load``'s); then, for each
    control, the CONTROLLED programs under it ("lr0/<name>")."""
    specs = programs(torch)
    out = {name: train(torch, name, spec, dtype) for name, spec in specs.items()}
    out["clip_accum_resumed"] = train(torch, "clip_accum", specs["clip_accum"], dtype,
                                      resume_at=2, save=save)
    if load:
        out["clip_accum_resumed_from_file"] = train(torch, "clip_accum", specs["clip_accum"],
                                                    dtype, resume_at=2, load=load)
    for control in controls:
        for name in CONTROLLED:
            out[f"{control}/{name}"] = train(torch, name, specs[name], dtype, control)
    return out


if __name__ == "__main__":
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("dtype")
    ap.add_argument("--controls", nargs="*", default=[], choices=["lr0", "flip"])
    ap.add_argument("--save")
    ap.add_argument("--load")
    a = ap.parse_args()
    res = run(torch, getattr(torch, a.dtype), a.controls, a.save, a.load)
    print(json.dumps(res))
