"""Lightning: ``Trainer.fit`` of a small LightningModule on the CPU (no logger, no progress bar)
with gradient accumulation, SGD with momentum and a scheduler, a checkpoint every epoch; then a
module with other initial weights resumed from the first epoch's checkpoint (``ckpt_path``) must
continue as the uninterrupted run did. Lightning does not restore the global RNG on resume, so
the program has no dropout and an unshuffled loader: the resumed run is then deterministic."""

import glob
import os
import tempfile
import warnings

import torch
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EPOCHS = 3


class Classifier(pl.LightningModule):
    def __init__(self, dt, seed):
        super().__init__()
        torch.manual_seed(seed)
        self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.LayerNorm(16),
                                 nn.Linear(16, 3)).to(dt)
        self.dt = dt
        self.losses = []

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.cross_entropy(self(x), y)
        self.losses.append(loss.detach().clone())
        return loss

    def configure_optimizers(self):
        opt = torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)
        return [opt], [torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)]

    def train_dataloader(self):
        g = torch.Generator().manual_seed(7)
        x = torch.randn(40, 8, generator=g, dtype=torch.float64).to(self.dt)
        y = torch.randint(0, 3, (40,), generator=g)
        return DataLoader(TensorDataset(x, y), batch_size=5)


def trainer(root, callbacks=()):
    return pl.Trainer(accelerator="cpu", devices=1, max_epochs=EPOCHS, logger=False,
                      enable_progress_bar=False, enable_model_summary=False,
                      accumulate_grad_batches=2, default_root_dir=root,
                      callbacks=list(callbacks), num_sanity_val_steps=0)


def weights(m):
    return {k: v.detach().clone() for k, v in m.state_dict().items()}


def run_case(dt):
    def run():
        warnings.filterwarnings("ignore", ".*does not have many workers.*")
        with tempfile.TemporaryDirectory() as root:
            ck = ModelCheckpoint(dirpath=root, save_top_k=-1, every_n_epochs=1)
            m = Classifier(dt, 0)
            t = trainer(root, [ck])
            t.fit(m)
            out = {"losses": torch.stack(m.losses), "global_step": torch.tensor(t.global_step),
                   **{f"w/{k}": v for k, v in weights(m).items()}}
            first = sorted(glob.glob(os.path.join(root, "epoch=0-*.ckpt")))
            if len(first) != 1:
                raise RuntimeError(f"expected one checkpoint of the first epoch, found {first}")
            saved = torch.load(first[0], weights_only=False)
            out["checkpoint/epoch"] = torch.tensor(saved["epoch"])
            resumed = Classifier(dt, 123)  # other initial weights
            t2 = trainer(root)
            t2.fit(resumed, ckpt_path=first[0])
            out["resumed/losses"] = torch.stack(resumed.losses)
            out["resumed/global_step"] = torch.tensor(t2.global_step)
            out.update({f"resumed/w/{k}": v for k, v in weights(resumed).items()})
            return out
    return run


def cases(dt):
    return {"fit": run_case(dt)}
