"""Kernel-layer bugs found in use, each compared with upstream in a separate process."""
from __future__ import annotations


from bugfix_probe import assert_agree

BROADCAST = {
    "add_last_dim": "torch.ones(2, 3) + torch.ones(3, 2)",
    "add_3d": "torch.ones(4, 2, 3) + torch.ones(5, 3, 3)",
    "add_ranks": "torch.ones(3, 1, 2) + torch.ones(4, 3)",
    "copy_": "torch.empty(2, 3).copy_(torch.ones(3, 2))",
    "copy_first_dim": "torch.empty(2, 3).copy_(torch.ones(4, 3))",
    "copy_grows": "torch.empty(3).copy_(torch.ones(2, 3))",
    "broadcast_tensors": "torch.broadcast_tensors(torch.ones(2, 3), torch.ones(3, 2))",
    "mse_loss": "F.mse_loss(torch.ones(2, 3), torch.ones(3, 2))",
    "masked_fill": "torch.masked_fill(torch.ones(2, 3), torch.ones(3, 2, dtype=torch.bool), 1.)",
    "where": "torch.where(torch.ones(2, 3, dtype=torch.bool), torch.ones(3, 2), 1.)",
    "cosine_similarity": "F.cosine_similarity(torch.ones(2, 3), torch.ones(3, 2))",
    "ok": "torch.ones(2, 1, 3) + torch.ones(4, 1)",
}


def test_broadcast_error_names_upstreams_dimension():
    assert_agree(BROADCAST)



DIAGFLAT = {
    "vector": "torch.diagflat(torch.tensor([1., 2., 3.]))",
    "matrix_offset": "torch.diagflat(torch.arange(4.).reshape(2, 2), 1)",
    "below": "torch.diagflat(torch.tensor([1, 2]), -2)",
    "transposed": "torch.arange(6.).reshape(2, 3).t().diagflat()",
    "scalar": "torch.tensor(5.).diagflat()",
    "meta": "torch.diagflat(torch.empty(2, 3, device='meta'), -1)",
    "grad": "torch.autograd.grad(torch.diagflat(W, 1).mul(torch.arange(25.).reshape(5, 5)).sum(), W)",
}


def test_diagflat():
    assert_agree(DIAGFLAT, setup="W = torch.arange(4.).reshape(2, 2).requires_grad_()\n")
