"""opacus (DP-SGD) on ours and upstream: per-sample gradients through its module hooks and through
its functorch mode (``torch.func.vmap`` over ``grad``), clipping, the seeded Gaussian noise, the
weights after every step and the RDP accountant's epsilon. A noise-free twin run (clipping and
per-sample gradients only) is compared with upstream's float64 rerun; the noised run is compared at
the tolerance that twin derives."""

from __future__ import annotations

import numpy as np
import pytest

from torchnative.testing import upstream
from torchnative.testing.golden import compare as cmp, tolerance

PROGRAM = r"""
import json, warnings, torch, torch.nn as nn
warnings.filterwarnings("ignore")
from opacus import PrivacyEngine
mode = "MODE"
DT = torch.DTYPE
def train(noise):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.GroupNorm(2, 4), nn.ReLU(), nn.Flatten(),
                          nn.Linear(4 * 6 * 6, 10)).to(DT)
    x = torch.randn(32, 1, 8, 8).to(DT)  # drawn in float32 on both runs
    y = torch.randint(0, 10, (32,))
    ds = torch.utils.data.TensorDataset(x, y)
    loader = torch.utils.data.DataLoader(ds, batch_size=8)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    pe = PrivacyEngine(accountant="rdp")
    gen = torch.Generator().manual_seed(1)
    model, opt, loader = pe.make_private(module=model, optimizer=opt, data_loader=loader,
                                         noise_multiplier=noise, max_grad_norm=1.0,
                                         noise_generator=gen, grad_sample_mode=mode,
                                         poisson_sampling=False)
    out = {"losses": [], "grad_sample": None}
    for i, (xb, yb) in enumerate(loader):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(xb), yb)
        loss.backward()
        if i == 0:
            out["grad_sample"] = torch.cat([p.grad_sample.flatten()
                                            for p in model.parameters()]).tolist()
        opt.step()
        out["losses"].append(loss.item())
    out["weights"] = torch.cat([p.detach().flatten() for p in model.parameters()]).tolist()
    out["epsilon"] = pe.get_epsilon(1e-5)
    return out


out = {"clean": train(0.0), "noisy": train(1.1) if DT == torch.float32 else None}
print(json.dumps(out))
"""


@pytest.fixture(scope="module", params=["hooks", "functorch"])
def runs(request):
    if not upstream.available():
        pytest.skip(upstream.missing("opacus comparison"))
    return upstream.run_with_float64_rerun(PROGRAM.replace("MODE", request.param))


KEYS = ["losses", "grad_sample", "weights"]


def noisy_problem(ours, up32, up64, key, moved=0.0):
    """The noised run against upstream's at the tolerance upstream's own float32 error shows on
    the noise-free twin (opacus draws a float64 model's noise in float64, so a float64 rerun of
    the noised run would see other noise)."""
    u_clean, h_clean = np.array(up32["clean"][key]), np.array(up64["clean"][key])
    tol = tolerance.derive([(u_clean, h_clean)], "float32")
    spread = float(np.abs(u_clean - h_clean).max())
    o = np.array(ours["noisy"][key]) + moved
    return cmp.close(np.array(up32["noisy"][key]), o, None, spread, tol)


@pytest.mark.parametrize("key", KEYS)
def test_clipped_training_agrees(runs, key):
    ours, up32, up64 = runs
    problem = cmp.elementwise(np.array(ours["clean"][key]), np.array(up32["clean"][key]),
                              np.array(up64["clean"][key]), "float32", summed=True)
    assert problem is None, problem


@pytest.mark.parametrize("key", KEYS)
def test_noised_training_agrees(runs, key):
    ours, up32, up64 = runs
    assert noisy_problem(ours, up32, up64, key) is None


def test_accountant_agrees(runs):
    ours, up32, _ = runs
    assert ours["noisy"]["epsilon"] == up32["noisy"]["epsilon"] > 0


def test_noise_is_in_the_comparison(runs):
    """The noised weights differ from the clean ones by far more than the tolerance, and a weight
    moved by a hundredth of that difference is caught."""
    ours, up32, up64 = runs
    gap = np.abs(np.array(ours["noisy"]["weights"]) - np.array(ours["clean"]["weights"])).max()
    assert gap > 1e-2
    assert noisy_problem(ours, up32, up64, "weights", moved=gap / 100) is not None
