"""Python-binding bugs found in use, each compared with upstream in a separate process."""
from __future__ import annotations

from bugfix_probe import assert_agree

META = "c = torch.tensor(True, device='meta'); m = torch.tensor(2., device='meta')\n"

SCALAR_AFTER_MATCH = {
    # a 0-dim tensor where an earlier signature has a Scalar: converted only once a signature
    # has matched, so a meta tensor (no value) reaches the Tensor overload
    "where_tensor_scalar": "torch.where(c, m, 0)",
    "where_scalar_tensor": "torch.where(c, 0, m)",
    "where_tensors": "torch.where(c, m, m)",
    "where_cpu": "torch.where(torch.tensor([True, False]), torch.tensor([1., 2.]), torch.tensor(7.))",
    "where_cpu_scalar": "torch.where(torch.tensor([True, False]), torch.tensor(3.), 0)",
    "add_alpha": "torch.add(torch.ones(2), torch.tensor(3.), alpha=2)",
    "pow_meta": "torch.pow(m, 2)",
    "clamp_meta": "torch.clamp(torch.empty(3, device='meta'), min=m)",
    "add_meta_to_cpu": "torch.ones(2).add(m)",
}


def test_scalar_parameters_convert_after_the_match():
    assert_agree(SCALAR_AFTER_MATCH, setup=META)
