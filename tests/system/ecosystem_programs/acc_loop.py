"""accelerate: an ``Accelerator`` training loop on the CPU with gradient accumulation (2 batches
per optimizer step), a shuffled DataLoader, dropout and a scheduler; ``save_state`` after the
first epoch, then a fresh model resumed with ``load_state`` (which restores the RNG states too,
so the resumed epochs shuffle and drop out as the uninterrupted run did). A run that skips
``load_state`` is the control."""

import tempfile

import torch
from accelerate import Accelerator
from accelerate.state import AcceleratorState, GradientState
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 3


def build(dt, seed):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Dropout(0.2), nn.Linear(16, 3)).to(dt)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    g = torch.Generator().manual_seed(7)
    x = torch.randn(48, 8, generator=g, dtype=torch.float64).to(dt)
    y = torch.randint(0, 3, (48,), generator=g)
    loader = DataLoader(TensorDataset(x, y), batch_size=6, shuffle=True)
    return model, opt, sched, loader


def fresh_accelerator():
    # one Accelerator per run: its process-wide state is reset between them
    AcceleratorState._reset_state(True)
    GradientState._reset_state()
    return Accelerator(cpu=True, gradient_accumulation_steps=2)


def train(acc, model, opt, sched, loader, epochs, losses, ckpt=None):
    loss_fn = nn.CrossEntropyLoss()
    for epoch in epochs:
        model.train()
        for x, y in loader:
            with acc.accumulate(model):
                loss = loss_fn(model(x), y)
                acc.backward(loss)
                opt.step()
                sched.step()
                opt.zero_grad()
            losses.append(loss.detach())
        if ckpt is not None and epoch == 0:
            acc.save_state(ckpt)


def weights(model):
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def run_case(dt, resume):
    def run():
        with tempfile.TemporaryDirectory() as ckpt:
            acc = fresh_accelerator()
            model, opt, sched, loader = acc.prepare(*build(dt, 0))
            full = []
            train(acc, model, opt, sched, loader, range(EPOCHS), full, ckpt)
            out = {"losses": torch.stack(full), "optimizer_steps": torch.tensor(
                [opt.state[p]["step"].item() for p in model.parameters()][:1]),
                   **{f"w/{k}": v for k, v in weights(model).items()}}
            acc = fresh_accelerator()
            model, opt, sched, loader = acc.prepare(*build(dt, 123))  # other initial weights
            if resume:
                acc.load_state(ckpt)
            rest = []
            train(acc, model, opt, sched, loader, range(1, EPOCHS), rest)
            out["resumed/losses"] = torch.stack(rest)
            out.update({f"resumed/w/{k}": v for k, v in weights(model).items()})
            return out
    return run


def cases(dt):
    return {"loop": run_case(dt, True), "no_load_control": run_case(dt, False)}
