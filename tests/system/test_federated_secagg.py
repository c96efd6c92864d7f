"""SecAgg+ (torchnative.nn.federated.secagg): the coordinator learns the sum and nothing else.

The sum is checked against the plain sum at the quantization bound (one step per participant
per entry, stochastic rounding); privacy of a single masked update is checked with a chi-square
independence test that flags an unmasked or weakly masked vector; dropouts are recovered up to
the threshold and fail the round by name beyond it; one round runs between real processes over
127.0.0.1 with participants computing their updates on our torch.
"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from torchnative.nn.federated.secagg import Config, Participant, SecAggRoundFailed, loopback, run_round
from torchnative.nn.federated.secagg import keys, prg, quantize, shamir

HERE = Path(__file__).parent


def _updates(n, size, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    return {nid: rng.normal(0, scale, size) for nid in range(1, n + 1)}


def test_aggregate_equals_plain_sum_within_quantization_bound():
    ups = _updates(6, 3000)
    cfg = Config(size=3000, num_shares=5, threshold=3, max_weight=1)
    mean, weight, survivors = run_round(ups, cfg)
    assert weight == 6 and survivors == list(range(1, 7))
    err = np.abs(mean * weight - sum(ups.values()))
    bound = 6 * quantize.step(cfg.clip, cfg.levels)  # one step per participant per entry
    assert err.max() <= bound, (err.max(), bound)
    # stochastic rounding is unbiased: the error averages out far below the bound
    assert abs(np.mean(mean * weight - sum(ups.values()))) < bound / 20


def test_weighted_mean_by_sample_count():
    ups = _updates(5, 500, seed=1)
    w = {1: 10, 2: 250, 3: 31, 4: 7, 5: 120}
    cfg = Config(size=500, num_shares=5, threshold=3, max_weight=1000)
    mean, weight, _ = run_round(ups, cfg, weights=w)
    truth = sum(w[i] * ups[i] for i in ups) / sum(w.values())
    assert weight == sum(w.values())
    bound = 5 * quantize.step(cfg.clip, cfg.levels) * cfg.max_weight / weight
    assert np.abs(mean - truth).max() <= bound
    # control: the unweighted mean is far outside the bound, so weights are really applied
    assert np.abs(mean - sum(ups.values()) / 5).max() > 100 * bound


def test_quantization_error_is_below_one_step_and_unbiased():
    rng = np.random.default_rng(2)
    x = rng.uniform(-3, 3, 200_000)
    clip, levels = 4.0, 1 << 10
    back = quantize.dequantize_sum(quantize.quantize(x, clip, levels, rng), 1, clip, levels)
    err = back - x
    assert np.abs(err).max() < quantize.step(clip, levels)
    assert abs(err.mean()) < 5 * quantize.step(clip, levels) / np.sqrt(x.size)
    # values beyond the clipping range are clipped, not wrapped
    assert quantize.dequantize_sum(quantize.quantize(np.array([100.0, -100.0]), clip, levels, rng), 1, clip, levels).tolist() == [4.0, -4.0]


def _manual_round(ups, cfg, tamper=None):
    from torchnative.nn.federated.secagg.protocol import Coordinator
    coord = Coordinator(cfg, sorted(ups))
    parts = {i: Participant(i, cfg) for i in ups}
    offered = coord.public_keys({i: parts[i].setup(coord.graph[i]) for i in ups})
    inbox = coord.route({i: parts[i].share_keys(offered[i]) for i in offered})
    masked = {i: parts[i].masked_input(inbox[i], ups[i]) for i in inbox}
    if tamper:
        tamper(masked)
    requests = coord.collect(masked)
    return coord.unmask({i: parts[i].unmask(*requests[i]) for i in requests})


def test_corrupted_masked_vector_breaks_the_sum():
    """Control for the bound above: one altered field element moves its entry far off."""
    ups = _updates(4, 100, seed=3)
    cfg = Config(size=100, num_shares=3, threshold=2, max_weight=1)
    bound = 4 * quantize.step(cfg.clip, cfg.levels)
    mean, weight = _manual_round(ups, cfg)
    assert np.abs(mean * weight - sum(ups.values())).max() <= bound

    def flip(masked):
        masked[2][17] = (masked[2][17] + 1000) % cfg.modulus

    mean, weight = _manual_round(ups, cfg, flip)
    err = np.abs(mean * weight - sum(ups.values()))
    assert err[17] > 100 * bound and np.delete(err, 17).max() <= bound


def _dependence_p(true_bits: np.ndarray, masked: np.ndarray) -> float:
    """Smallest p-value of two-sample KS tests that the masked values of entries whose true
    value is +6 and of those whose true value is -6 come from the same distribution, looking at
    the masked value modulo 2**8, 2**16, 2**24 and 2**32 (a mask that leaves low or high bits
    alone is caught at one of them)."""
    masked = masked.astype(np.int64)
    ps = [stats.ks_2samp(masked[true_bits == 1] % (1 << k), masked[true_bits == 0] % (1 << k)).pvalue
          for k in (8, 16, 24, 32)]
    return min(ps)


def test_masked_update_is_independent_of_the_true_update():
    size = 20_000
    rng = np.random.default_rng(4)
    signs = rng.integers(0, 2, size)
    ups = _updates(5, size, seed=5)
    ups[1] = np.where(signs == 1, 6.0, -6.0)  # participant 1's update: extreme, known values
    cfg = Config(size=size, num_shares=5, threshold=3, max_weight=1)
    seen = {}
    run_round(ups, cfg, observe=seen)
    view = seen["masked"][1][:size]
    assert _dependence_p(signs, view) > 1e-4
    # the whole field is used: the masked entries look uniform on [0, modulus)
    assert stats.kstest(view / cfg.modulus, "uniform").pvalue > 1e-4

    # controls: the same statistic flags an unmasked update and weakly masked ones
    q = quantize.quantize(ups[1], cfg.clip, cfg.levels, rng)
    assert _dependence_p(signs, q) < 1e-12
    low = (q + prg.mask(b"\1" * 32, size, 1 << 16)) % cfg.modulus  # a mask of 16 bits only
    assert _dependence_p(signs, low) < 1e-12
    high = (q + (prg.mask(b"\2" * 32, size, 1 << 8) << 24)) % cfg.modulus  # only the top 8 bits masked
    assert _dependence_p(signs, high) < 1e-12


@pytest.mark.parametrize("drops", [
    {2: "masked_input"},
    {2: "masked_input", 6: "unmask"},
    {1: "share_keys", 4: "masked_input", 7: "unmask"},
    {3: "setup", 5: "masked_input", 6: "masked_input"},
])
def test_dropouts_up_to_the_threshold_are_recovered(drops):
    ups = _updates(7, 400, seed=6)
    cfg = Config(size=400, num_shares=7, threshold=4, max_weight=1)
    mean, weight, survivors = run_round(ups, cfg, drop=drops)
    gone_before_input = {n for n, s in drops.items() if s in ("setup", "share_keys", "masked_input")}
    assert survivors == sorted(set(ups) - gone_before_input)
    truth = sum(ups[i] for i in survivors)
    assert weight == len(survivors)
    assert np.abs(mean * weight - truth).max() <= len(survivors) * quantize.step(cfg.clip, cfg.levels)


def test_sparse_neighbourhood_recovers_a_dropout():
    """SecAgg+ proper: each participant shares with a ring of 5 out of 9."""
    ups = _updates(9, 300, seed=7)
    cfg = Config(size=300, num_shares=5, threshold=3, max_weight=1)
    mean, weight, survivors = run_round(ups, cfg, drop={4: "masked_input", 8: "unmask"})
    assert 4 not in survivors and 8 in survivors
    assert np.abs(mean * weight - sum(ups[i] for i in survivors)).max() <= 9 * quantize.step(cfg.clip, cfg.levels)


@pytest.mark.parametrize("stage", ["masked_input", "unmask"])
def test_beyond_the_threshold_the_round_fails_by_name(stage):
    ups = _updates(7, 50, seed=8)
    cfg = Config(size=50, num_shares=7, threshold=4, max_weight=1)
    with pytest.raises(SecAggRoundFailed, match="threshold is 4|cannot recover"):
        run_round(ups, cfg, drop={1: stage, 2: stage, 3: stage, 4: stage})


def test_unmask_refuses_both_secrets_of_one_neighbour():
    cfg = Config(size=4, num_shares=3, threshold=2, max_weight=1)
    p = Participant(1, cfg)
    p.setup([1, 2, 3])
    p.held = {2: (b"b", b"sk")}
    with pytest.raises(SecAggRoundFailed, match="both secrets of \\[2\\]"):
        p.unmask([1, 2], [2])


def test_shamir_threshold_and_tampering():
    secret = b"\0\x07" + bytes(range(30))
    shares = shamir.split(secret, 3, [5, 9, 11, 12])
    assert shamir.combine([shares[9], shares[12], shares[5]], 3) == secret
    assert shamir.combine([shares[11], shares[5], shares[12]], 3) == secret
    with pytest.raises(shamir.NotEnoughShares):
        shamir.combine([shares[9], shares[12]], 3)
    # Shamir alone does not authenticate: a tampered share yields another secret (shares travel
    # sealed with an AEAD for that reason); a malformed one is refused
    bad = bytearray(shares[9]); bad[-1] ^= 1
    try:
        assert shamir.combine([bytes(bad), shares[12], shares[5]], 3) != secret
    except ValueError:
        pass
    with pytest.raises(ValueError, match="share is 70 bytes"):
        shamir.combine([shares[9][:-1], shares[12], shares[5]], 3)


def test_key_agreement_and_sealing():
    a, b = keys.new_private_key(), keys.new_private_key()
    k1 = keys.agree(a, keys.public_key(b), b"x")
    assert k1 == keys.agree(b, keys.public_key(a), b"x") and k1 != keys.agree(a, keys.public_key(b), b"y")
    box = keys.seal(k1, b"share", b"1->2")
    assert keys.open_sealed(k1, box, b"1->2") == b"share"
    with pytest.raises(Exception):  # a rerouted ciphertext fails authentication
        keys.open_sealed(k1, box, b"1->3")


def test_bad_configuration_is_refused():
    with pytest.raises(ValueError, match="overflow"):
        Config(size=1, num_shares=3, threshold=2, levels=1 << 30).check(8)
    with pytest.raises(ValueError, match="power of two"):
        Config(size=1, num_shares=3, threshold=2, modulus=3 << 20).check(2)
    p = Participant(1, Config(size=3, num_shares=3, threshold=1, max_weight=1))
    p.setup([1])
    p.public, p.held = {}, {}
    with pytest.raises(ValueError, match="NaN or inf"):
        p.masked_input({}, np.array([1.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match="entries"):
        p.masked_input({}, np.zeros(4))


def test_round_between_processes_over_loopback(tmp_path):
    """Four participant processes on our torch, one of which leaves before unmasking."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    port = listener.getsockname()[1]
    n, size = 4, 131
    procs = []
    for nid in range(1, n + 1):
        leave = ["unmask"] if nid == 3 else []
        procs.append(subprocess.Popen(
            [sys.executable, str(HERE / "federated_programs/secagg_participant.py"), "127.0.0.1", str(port),
             str(nid), str(tmp_path / f"{nid}.npy"), *leave],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    cfg = Config(size=size, num_shares=3, threshold=2, max_weight=1)
    seen = {}
    try:
        mean, weight, survivors = loopback.serve_round(listener, n, cfg, timeout=120, observe=seen)
    finally:
        outs = [p.communicate(timeout=120) for p in procs]
        listener.close()
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "torchnative/_C" in out  # the participant ran on our torch
    assert survivors == [1, 2, 3, 4]  # 3 sent its masked input; its mask seed was recovered
    truth = sum(np.load(tmp_path / f"{i}.npy") for i in survivors)
    assert np.abs(truth).max() > 1e-3
    assert np.abs(mean * weight - truth).max() <= n * quantize.step(cfg.clip, cfg.levels)
    for nid, view in seen["masked"].items():  # what the coordinator saw is far from any update
        assert np.abs(quantize.dequantize_sum(view[:size], 1, cfg.clip, cfg.levels) - np.load(tmp_path / f"{nid}.npy")).mean() > 0.1


def _true_delta(pid: int, participants: int, g0, lr=0.1, alpha=0.5, seed=0):
    """Participant ``pid``'s round-1 delta, recomputed here with the engine's own local loop."""
    import torch
    import torch.nn.functional as F
    from torchnative.nn.federated import digits
    from torchnative.nn.federated.local import train_local
    xtr, ytr, _, _ = digits.load(seed)
    idx = digits.dirichlet_split(ytr, participants, alpha, seed)[pid - 1]
    net = digits.model(seed)
    with torch.no_grad():
        for n, p in net.named_parameters():
            p.copy_(torch.from_numpy(g0[n]))
    n = train_local(net, digits.batches(xtr[idx], ytr[idx]), loss_fn=F.cross_entropy,
                    make_optimizer=lambda ps: torch.optim.SGD(ps, lr=lr), epochs=1, proximal_mu=0.0, anchor={})
    return {k: p.detach().numpy() - g0[k] for k, p in net.named_parameters()}, n


def test_secure_aggregation_through_the_engine(tmp_path):
    """A real Engine world (coordinator + 3 participants, our torch) with SecureAggregation as its
    Transform; participant 2 exits right after sending its masked update, so its mask seed is
    recovered from its neighbours' shares. The new global model is the global plus the weighted
    mean of the true deltas (recomputed here) at the quantization bound; what the coordinator
    saw of each participant is nowhere near that participant's delta."""
    from torchnative.nn.federated import experiment
    out, view = tmp_path / "run", tmp_path
    res = experiment.launch(4, ["--rounds", "1", "--timeout", "60", "--out", str(out), "--save-globals", "--view", str(view)],
                            module="secagg_engine_worker", per_rank={2: ["--die-after-send"]},
                            env={**__import__("os").environ, "PYTHONPATH": str(HERE / "federated_programs")}, timeout=600)
    assert all(code == 0 for code, _ in res.values()), res
    g0, g1 = np.load(out / "global_r0.npz"), np.load(out / "global_r1.npz")
    truth = {p: _true_delta(p, 3, g0) for p in (1, 2, 3)}
    w = {p: n for p, (_, n) in truth.items()}
    total = sum(w.values())
    cfg = Config(size=1, num_shares=3, threshold=2)  # the transform's defaults: clip 8, 2**22 levels, max_weight 1000
    bound = 3 * quantize.step(cfg.clip, cfg.levels) * cfg.max_weight / total + 1e-6  # + float32 rounding of the global
    moved = 0.0
    for k in g0.files:
        mean = sum(w[p] * truth[p][0][k] for p in truth) / total
        err = np.abs((g1[k] - g0[k]) - mean).max()
        assert err <= bound, (k, err, bound)
        moved = max(moved, np.abs(mean).max())
    assert moved > 100 * bound  # the check has teeth: the model really moved
    seen = np.load(view / "coordinator_view_r1.npz")
    assert sorted(seen.files) == ["p1", "p2", "p3"]
    for p in (1, 2, 3):
        masked = seen[f"p{p}"][:-1]
        plain = quantize.dequantize_sum(masked, 1, cfg.clip, cfg.levels)
        flat = np.concatenate([truth[p][0][k].reshape(-1) for k in g0.files]) * w[p] / cfg.max_weight
        assert np.abs(plain - flat).mean() > 1.0  # a masked entry is uniform on [-8, 8], the delta ~1e-3
        assert stats.kstest(masked / cfg.modulus, "uniform").pvalue > 1e-6


@pytest.mark.slow
def test_engine_round_beyond_the_threshold_fails_by_name(tmp_path):
    """Threshold 3 of a cohort of 3: one participant crashing before unmask leaves 2 shares of
    each secret, and the coordinator refuses the round by name (no model is produced)."""
    from torchnative.nn.federated import experiment
    out = tmp_path / "run"
    res = experiment.launch(4, ["--rounds", "1", "--timeout", "60", "--out", str(out), "--save-globals",
                                "--view", str(tmp_path), "--threshold", "3"],
                            module="secagg_engine_worker", per_rank={2: ["--die-after-send"]},
                            env={**__import__("os").environ, "PYTHONPATH": str(HERE / "federated_programs")}, timeout=600)
    code, err = res[0]
    assert code != 0 and "SecAggRoundFailed: unmask: cannot recover the mask seed" in err, res[0]
    assert not (out / "global_r1.npz").exists()
