"""One training step (forward + backward + optimizer step), ours vs upstream, in the same run.

Usage: .venv/bin/python bench/train_step.py [--rounds 3] [--threads 2]
       (TRAIN_STEP_CASES=mlp,cnn in the environment runs only those cases)
Cases (issue 6): an MLP 64->128->10 on a digits-sized batch (64 random 8x8 images; SGD with
momentum), a small CNN with BatchNorm and Dropout in train mode (batch 16 of 1x16x16; Adam), and
all-MiniLM-L6-v2 on a batch of 4 short sentences (mean pooling, linear head, cross-entropy; AdamW).
Figures are milliseconds per step (wall), median of timed steps after warm-up steps, and the
CPU milliseconds of each phase of the same steps (forward, backward, optimizer step), medians.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def _training(opt, loss_fn):
    """A case: the optimizer and the loss of one forward pass."""
    return opt, loss_fn


def _timed(opt, loss_fn, runs: int, warm: int) -> dict:
    """Median wall ms of whole steps and median CPU ms of their phases."""
    import statistics
    import time

    for _ in range(warm):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
    wall, phases = [], {"forward": [], "backward": [], "optimizer": []}
    for _ in range(runs):
        w0 = time.perf_counter()
        opt.zero_grad()
        c0 = time.process_time()
        loss = loss_fn()
        c1 = time.process_time()
        loss.backward()
        c2 = time.process_time()
        opt.step()
        c3 = time.process_time()
        wall.append(time.perf_counter() - w0)
        for k, a, b in (("forward", c0, c1), ("backward", c1, c2), ("optimizer", c2, c3)):
            phases[k].append(b - a)
    out = {"step": statistics.median(wall) * 1e3}
    out.update({k: statistics.median(v) * 1e3 for k, v in phases.items()})
    return out


def mlp(torch):
    nn = torch.nn
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    x, y = torch.rand(64, 64) * 16, torch.randint(0, 10, (64,))
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    return _training(opt,
                    lambda: nn.functional.cross_entropy(net(x), y))


def cnn(torch):
    nn = torch.nn
    torch.manual_seed(0)
    net = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.25), nn.Linear(16 * 4 * 4, 10)).train()
    x, y = torch.randn(16, 1, 16, 16), torch.randint(0, 10, (16,))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    return _training(opt,
                    lambda: nn.functional.cross_entropy(net(x), y))


def minilm(torch):
    sys.path.insert(0, str(REPO / "src"))
    from transformers import AutoModel, AutoTokenizer

    from torchnative.apps.checkpoints import minilm_dir

    tok = AutoTokenizer.from_pretrained(minilm_dir())
    model = AutoModel.from_pretrained(minilm_dir()).eval()  # dropout off, as in the fine-tune test
    batch = tok(["The cat sits on the mat.", "A cat is sitting on a rug.",
                 "The stock market fell sharply today.", "Rain is expected tomorrow."],
                padding=True, return_tensors="pt")
    torch.manual_seed(0)
    head = torch.nn.Linear(384, 3)
    y = torch.tensor([0, 0, 1, 2])
    mask = batch["attention_mask"].unsqueeze(-1).float()
    opt = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=1e-4)

    def loss():
        hidden = model(**batch).last_hidden_state
        return torch.nn.functional.cross_entropy(head((hidden * mask).sum(1) / mask.sum(1)), y)
    return _training(opt, loss)


CASES = {"mlp 64-128-10, batch 64, SGD": (mlp, 3, 20),
         "cnn bn+dropout train, batch 16, Adam": (cnn, 2, 10),
         "minilm 4 sentences, AdamW": (minilm, 1, 3)}


def worker(threads: int) -> None:
    import os

    import torch

    torch.set_num_threads(threads)
    result = {}
    only = os.environ.get("TRAIN_STEP_CASES")  # e.g. "mlp,cnn": a subset, by first word
    for name, (make, warm, n) in CASES.items():
        if only and name.split()[0] not in only.split(","):
            continue
        timed = _timed(*make(torch), n, warm)
        result[name] = timed.pop("step")
        for phase, ms in timed.items():
            result[f"  {name.split(',')[0]}: {phase} (cpu)"] = ms
    _harness.emit(result)


if __name__ == "__main__":
    _harness.main(__file__, worker, unit="ms")
