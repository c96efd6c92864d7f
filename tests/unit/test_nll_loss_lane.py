"""nll_loss_forward / nll_loss_backward's lane (no class weights, reduction mean or sum, every
target a class and none ignored) gives the general steps' bits: the same gathered values,
upstream's cascade sum (nn_loss_cascade.py), roundings and division; special values in the
picked log-probabilities; float32 and float64; 1-d and 2-d inputs, Long and Byte targets.
Targets that are ignored or out of range, class weights and reduction none take the general
steps (errors included). Control: a sum in another order is caught."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import nn_loss

A = torch.ops.aten


class _Never:
    """every_target_kept answering False: the general steps run."""

    def __call__(self, *args):
        return False


def _both(monkeypatch, fn, *args):
    got = fn(*args)
    with monkeypatch.context() as m:
        m.setattr(nn_loss, "every_target_kept", _Never())
        from torchnative.csrc.kernels import nn_loss_backward as nb
        m.setattr(nb, "every_target_kept", _Never())
        want = fn(*args)
    return got, want


def _bits(ts):
    ts = ts if isinstance(ts, tuple) else (ts,)
    return [(t.dtype, tuple(t.shape), t.numpy().tobytes()) for t in ts]


def _logits(n, c, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.log_softmax(torch.randn(n, c, generator=g, dtype=dtype) * 30, 1)
    flat = x.view(-1)
    for i, v in enumerate([-0.0, 0.0, float("-inf"), 1e-45, -3e38]):
        if i * 7 < flat.numel():
            flat[i * 7] = v
    return x


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("n,c", [(1, 3), (64, 10), (16, 10), (1000, 7), (5, 1)])
@pytest.mark.parametrize("reduction", [1, 2])
def test_lane_matches_general_steps(dtype, n, c, reduction, monkeypatch):
    x = _logits(n, c, dtype, n + c)
    t = torch.randint(0, c, (n,), generator=torch.Generator().manual_seed(c))
    for target in (t, t.to(torch.uint8)):
        for ignore in (-100, c, c + 5):
            fwd = _both(monkeypatch, A.nll_loss_forward, x, target, None, reduction, ignore)
            assert _bits(fwd[0]) == _bits(fwd[1])
            go = torch.tensor(0.37, dtype=dtype)
            bwd = _both(monkeypatch, A.nll_loss_backward, go, x, target, None, reduction, ignore,
                        fwd[0][1])
            assert _bits(bwd[0]) == _bits(bwd[1])
    one = _both(monkeypatch, A.nll_loss_forward, x[0], t[0], None, reduction, -100)
    assert _bits(one[0]) == _bits(one[1])


def test_outside_the_lane(monkeypatch):
    x = _logits(8, 5, torch.float32, 1)
    t = torch.tensor([0, 1, 2, 3, 4, 0, 1, 2])
    for target, ignore, weight, red in ((t, 2, None, 1),             # an ignored target
                                        (t, -100, torch.rand(5), 1),  # class weights
                                        (t, -100, None, 0)):          # reduction none
        calls = []
        real = nn_loss.every_target_kept
        monkeypatch.setattr(nn_loss, "every_target_kept",
                            lambda *a: calls.append(1) or real(*a))
        out = A.nll_loss_forward(x, target, weight, red, ignore)
        monkeypatch.undo()
        assert not calls or not real(t.numpy(), ignore, 5)
        assert out[0].dtype == torch.float32
    bad = torch.tensor([0, 1, 7, 3, 4, 0, 1, 2])
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        A.nll_loss_forward(x, bad, None, 1, -100)
    with pytest.raises(IndexError, match="Target 7 is out of bounds"):
        A.nll_loss_backward(torch.tensor(1.0), x, bad, None, 1, -100, torch.tensor(8.0))
    neg = torch.tensor([0, 1, -1, 3, 4, 0, 1, 2])
    with pytest.raises(IndexError, match="Target -1 is out of bounds"):
        A.nll_loss_forward(x, neg, None, 2, -100)


def test_control_other_sum_order_is_caught():
    """The lane's sum is the cascade's; a pairwise or a plain sequential sum of the same values
    differs on some of these inputs, so the comparisons above would see either."""
    from test_nll_cascade_loop import literal_loop

    differ = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        picked = (rng.standard_normal(1000) * np.exp(rng.uniform(-20, 20, 1000))).astype(np.float64)
        x = torch.from_numpy(picked.reshape(1000, 1))
        t = torch.zeros(1000, dtype=torch.long)
        got = A.nll_loss_forward(x, t, None, 2, -100)[0].item()
        assert got == literal_loop(picked, range(1000), 1000, True, np.dtype(np.float64))
        differ += (got != -picked.sum()) + (got != -np.add.accumulate(picked)[-1])
    assert differ >= 3, differ
