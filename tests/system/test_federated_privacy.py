"""Differential privacy (torchnative.nn.federated.privacy).

The accountant is compared with opacus 1.6.0's RDP accountant, run in upstream's environment;
the noise is checked to have its stated standard deviation with a chi-square test on the sample
variance; clipping bounds the norm; adaptive clipping tracks its target quantile. Every check
has a control that the same comparison rejects (a wrong accountant, a wrong std, a wrong sign).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats

from torchnative.nn.federated.privacy import (AdaptiveClipping, FixedClipping, LocalGaussian, RDPAccountant,
                                              clip, epsilon, l2_norm, noisy_mean, rdp)
from torchnative.nn.federated.privacy.accountant import DEFAULT_ORDERS
from torchnative.nn.federated.transform import RoundContext
from torchnative.testing import upstream

SRC = str(Path(__file__).resolve().parents[2] / "src")

# (noise multiplier, sample rate, rounds, delta): small and large noise, sparse and full sampling
CASES = [[1.0, 0.01, 1000, 1e-5], [0.8, 0.1, 20, 1e-5], [1.3, 0.5, 50, 1e-6], [4.0, 0.2, 100, 1e-5],
         [0.6, 0.05, 300, 1e-3], [2.0, 1.0, 10, 1e-5], [10.0, 0.001, 10000, 1e-7]]
# Both sides compute the same float64 quantity; opacus truncates its series at terms below e**-30
# and we integrate to a relative 1e-13, so they agree far below this.
REL = 1e-9


# The privacy code run on upstream torch (plain torch code, PYTHONPATH=src): a seeded noisy mean.
NOISY_MEAN = """
g = torch.Generator().manual_seed(11)
ups = [{"w": (torch.arange(64.0) - 31.5).reshape(8, 8) / 8 * (i + 1)} for i in range(3)]
mean, clipped = noisy_mean(ups, 4.0, 0.7, 3, g)
noisy = {"mean": mean["w"].reshape(-1).tolist(), "clipped": clipped, "torch_C": torch._C.__file__}
"""


@pytest.fixture(scope="module")
def upstream_results():
    """One upstream process: opacus's epsilons for CASES (and a two-phase run), and our privacy
    code's noisy mean on upstream's torch."""
    if not upstream.available():
        upstream.missing("the upstream environment (.venv-upstream)")
    code = f"""
import json, warnings
import torch
warnings.simplefilter("ignore")
from opacus.accountants import RDPAccountant
from torchnative.nn.federated.privacy import noisy_mean
out = []
for z, q, n, d in {CASES!r}:
    acc = RDPAccountant()
    for _ in range(n):
        acc.step(noise_multiplier=z, sample_rate=q)
    out.append(list(acc.get_privacy_spent(delta=d)))
# two phases composed: 30 rounds at (1.1, 0.2) then 70 at (0.9, 0.1)
acc = RDPAccountant()
for _ in range(30):
    acc.step(noise_multiplier=1.1, sample_rate=0.2)
for _ in range(70):
    acc.step(noise_multiplier=0.9, sample_rate=0.1)
out.append(list(acc.get_privacy_spent(delta=1e-5)))
{NOISY_MEAN}
print(json.dumps({{"opacus": out, "noisy": noisy}}))
"""
    return upstream.run_json(code, timeout=600, env={"PYTHONPATH": SRC})


@pytest.fixture(scope="module")
def opacus_eps(upstream_results):
    return upstream_results["opacus"]


def _agrees(ours, theirs) -> bool:
    return abs(ours[0] - theirs[0]) <= REL * abs(theirs[0]) and ours[1] == theirs[1]


def _ours(z, q, n, d):
    acc = RDPAccountant()
    acc.step(z, q, n)
    return acc.get_epsilon(d)


def test_accountant_agrees_with_opacus(opacus_eps):
    for case, theirs in zip(CASES, opacus_eps):
        assert _agrees(_ours(*case), theirs), (case, _ours(*case), theirs)
    acc = RDPAccountant()
    for _ in range(30):
        acc.step(1.1, 0.2)
    for _ in range(70):
        acc.step(0.9, 0.1)
    assert _agrees(acc.get_epsilon(1e-5), opacus_eps[-1])


def test_a_wrong_accountant_is_caught(opacus_eps):
    """Plausible mistakes, each rejected by the comparison above."""
    def no_amplification(z, q, n, d):  # forgets that sampling amplifies privacy
        return epsilon(rdp(1.0, z, n), DEFAULT_ORDERS, d)

    def classic_conversion(z, q, n, d):  # Mironov's eps = rdp + log(1/delta)/(a-1), looser
        r = rdp(q, z, n)
        a = np.asarray(DEFAULT_ORDERS)
        e = r + math.log(1 / d) / (a - 1)
        return float(e.min()), float(a[e.argmin()])

    def one_round(z, q, n, d):  # does not compose the rounds
        return epsilon(rdp(q, z, 1), DEFAULT_ORDERS, d)

    def std_for_multiplier(z, q, n, d):  # takes noise std z*C with C = 2 as the multiplier
        return epsilon(rdp(q, 2 * z, n), DEFAULT_ORDERS, d)

    for wrong in (no_amplification, classic_conversion, one_round, std_for_multiplier):
        caught = [not _agrees(wrong(*case), theirs) for case, theirs in zip(CASES, opacus_eps)]
        # full sampling (q = 1) makes the amplification mistake harmless there, nowhere else
        assert sum(caught) >= len(CASES) - 1, wrong.__name__


# The seeds are fixed, so each test is deterministic; the level is 1e-6 so that a correct mechanism
# passes for practically any seed (upstream's own randn reaches p = 8e-5 on one seed of 400 at
# this size), while every control below lands far beyond it (p < 1e-20).
LEVEL = 1e-6


def _variance_p(x: np.ndarray, std: float) -> float:
    """Two-sided p-value that ``x`` (mean 0) has standard deviation ``std``: n * s^2 / std^2 is
    chi-square with n degrees of freedom."""
    stat = float(np.sum(x.astype(np.float64) ** 2) / std ** 2)
    cdf = stats.chi2.cdf(stat, x.size)
    return 2 * min(cdf, 1 - cdf)


def test_local_noise_has_the_stated_std():
    dp = LocalGaussian(clip_norm=0.5, noise_multiplier=1.3, seed=1)
    ctx = RoundContext(round=3, participant=7, participants=[7])
    zero = {"w": torch.zeros(300, 200), "b": torch.zeros(1000)}
    sent = dp.on_send(zero, ctx)
    x = np.concatenate([t.numpy().reshape(-1) for t in sent.values()])
    assert sent["w"].dtype == torch.float32 and sent["w"].shape == (300, 200)
    assert _variance_p(x, 0.65) > LEVEL
    assert abs(x.mean()) < 5 * 0.65 / math.sqrt(x.size)
    assert stats.kstest(x / 0.65, "norm").pvalue > LEVEL
    # controls: 3% off in the std, or the variance taken for the std, are rejected
    assert _variance_p(x, 0.65 * 1.03) < 1e-20 and _variance_p(x, 0.65 * 0.97) < 1e-20
    assert _variance_p(x, 0.65 ** 2) < 1e-20
    # another round or participant draws fresh noise
    again = dp.on_send(zero, RoundContext(round=4, participant=7, participants=[7]))
    assert not torch.equal(again["w"], sent["w"])


def test_server_noise_has_std_z_c_over_m():
    gen = torch.Generator().manual_seed(2)
    ups = [{"w": torch.zeros(100_000)} for _ in range(4)]
    mean, clipped = noisy_mean(ups, clip_norm=2.0, noise_multiplier=1.5, num_sampled=5, generator=gen)
    std = 1.5 * 2.0 / 5
    assert clipped == 0 and _variance_p(mean["w"].numpy(), std) > LEVEL
    assert _variance_p(mean["w"].numpy(), 1.5 * 2.0 / 4) < 1e-20  # dividing by those who reported


def test_clipping_bounds_the_norm_and_keeps_the_direction():
    g = torch.Generator().manual_seed(3)
    for scale in (1e-3, 0.3, 5.0, 1e4):
        u = {"a": torch.randn(40, 7, generator=g) * scale, "b": torch.randn(9, generator=g) * scale}
        c, was = clip(u, 1.0)
        n = l2_norm(u)
        assert l2_norm(c) <= 1.0 * (1 + 1e-6)
        assert was == (n > 1.0)
        if not was:
            assert all(torch.equal(c[k], u[k]) for k in u)
        else:
            assert abs(l2_norm(c) - 1.0) < 1e-5
            cos = sum(float((c[k] * u[k]).sum()) for k in u) / (l2_norm(c) * n)
            assert cos > 1 - 1e-6
    with pytest.raises(ValueError, match="NaN or inf"):
        clip({"a": torch.tensor([1.0, float("nan")])}, 1.0)


def test_fixed_denominator_counts_a_dropped_participant():
    """Five selected, four report: the mean divides by five (DP-FedAvg's fixed denominator), so
    the sensitivity stays C/5; dividing by four would be caught here."""
    dp = FixedClipping(clip_norm=10.0, noise_multiplier=0.0, seed=0)
    ups = {i: {"w": torch.full((3,), float(i))} for i in (1, 2, 3, 4)}
    out, w = dp.on_receive(ups, {i: 10 for i in ups}, RoundContext(round=1, participant=None, participants=[1, 2, 3, 4, 5]))
    assert w == {-1: 1}
    assert torch.allclose(out[-1]["w"], torch.full((3,), 10.0 / 5))


def test_adaptive_clipping_tracks_the_target_quantile():
    rng = np.random.default_rng(5)
    m = 40
    dp = AdaptiveClipping(noise_multiplier=0.0, num_sampled=m, initial_clip_norm=0.1, target_quantile=0.7, lr=0.2)
    for _ in range(80):
        norms = rng.lognormal(0.0, 0.5, m)
        dp.aggregate([{"w": torch.tensor([n], dtype=torch.float64)} for n in norms], m)
    target = float(np.exp(0.5 * stats.norm.ppf(0.7)))  # the 0.7 quantile of the norms
    assert abs(dp.clip_norm - target) / target < 0.1, (dp.clip_norm, target)

    # control: the update with the sign turned (counting clipped updates instead of unclipped
    # ones) runs away from the quantile instead
    class Flipped(AdaptiveClipping):
        def aggregate(self, updates, num_sampled):
            clipped = sum(clip(u, self.clip_norm)[1] for u in updates)
            self.clip_norm *= math.exp(-self.lr * (clipped / num_sampled - self.target_quantile))
            return updates[0]

    bad = Flipped(noise_multiplier=0.0, num_sampled=m, initial_clip_norm=0.1, target_quantile=0.7, lr=0.2)
    for _ in range(80):
        bad.aggregate([{"w": torch.tensor([n], dtype=torch.float64)} for n in rng.lognormal(0.0, 0.5, m)], m)
    assert abs(bad.clip_norm - target) / target > 0.5


def test_adaptive_noise_split():
    """Andrew et al.: the multiplier left for the mean after the noisy count."""
    dp = AdaptiveClipping(noise_multiplier=1.0, num_sampled=100)
    assert dp.count_std == 5.0
    assert dp.delta_multiplier == pytest.approx((1 - 1 / 100) ** -0.5, rel=1e-12)
    with pytest.raises(ValueError, match="count_std"):
        AdaptiveClipping(noise_multiplier=1.0, num_sampled=10)  # 10/20 = 0.5 cannot pay for z = 1


def test_privacy_code_runs_on_upstream_and_agrees(upstream_results):
    """The library is plain torch: on upstream, with the same seed, the same noisy mean."""
    theirs = upstream_results["noisy"]
    scope = {"torch": torch, "noisy_mean": noisy_mean}
    exec(NOISY_MEAN, scope)
    ours = scope["noisy"]
    assert "torchnative" not in theirs["torch_C"] and "torchnative" in ours["torch_C"]
    assert theirs["clipped"] == ours["clipped"] == 3
    # the same float64 arithmetic and the same mt19937 normal draws: float32 results bit for bit
    assert ours["mean"] == theirs["mean"]


def test_privacy_through_the_engine(tmp_path):
    """Both sides through the Engine's Transform hook, in a real world of 3 processes. With
    lr = 0 the true deltas are zero, so what each participant sends is its noise alone: it must
    have std z * C. The coordinator's result must be the global plus the clipped mean of exactly
    what was sent, over the participants selected."""
    import sys as _sys
    from torchnative.nn.federated import experiment
    here = Path(__file__).parent
    out = tmp_path / "run"
    local_clip, local_z, server_clip = 0.5, 0.4, 1.0
    res = experiment.launch(3, ["--rounds", "1", "--lr", "0", "--out", str(out), "--save-globals", "--save-deltas",
                                "--local-clip", str(local_clip), "--local-z", str(local_z),
                                "--server-clip", str(server_clip), "--server-z", "0"],
                            module="dp_engine_worker", env={**os.environ, "PYTHONPATH": str(here / "federated_programs")},
                            timeout=600)
    assert all(code == 0 for code, _ in res.values()), res
    g0, g1 = np.load(out / "global_r0.npz"), np.load(out / "global_r1.npz")
    sent = [np.load(out / f"delta_r1_p{p}.npz") for p in (1, 2)]
    noise = np.concatenate([d[k].reshape(-1) for d in sent for k in g0.files])
    assert _variance_p(noise, local_z * local_clip) > LEVEL
    assert _variance_p(noise, local_z * local_clip * 1.1) < 1e-6  # control at this smaller size
    ups = [{k: torch.from_numpy(d[k]) for k in g0.files} for d in sent]
    assert all(l2_norm(u) > server_clip for u in ups)  # the server's clipping is active
    mean, clipped = noisy_mean(ups, server_clip, 0.0, 2, torch.Generator().manual_seed(0))
    assert clipped == 2
    for k in g0.files:
        assert np.array_equal(g1[k], (torch.from_numpy(g0[k]) + mean[k]).numpy()), k
