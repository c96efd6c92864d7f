"""Dispatch on the union of the arguments' devices: a meta tensor anywhere in the arguments runs
the meta kernel, as upstream's key set (Meta's backend outranks CPU's) — e.g. ``1 - t`` on a meta
``t`` (transformers computes rotary frequencies so while a model is built on the meta device)."""

from __future__ import annotations

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = """
m = torch.ones(3, device="meta")
out = {}
cases = {
    "rsub_scalar": lambda: 1 - m,
    "cpu_scalar_tensor_first": lambda: torch.ones(()) * m,
    "scalar_first_div": lambda: 2.0 / m,
    "where_scalars": lambda: torch.where(m > 0, 0.0, m),
    "cat_meta_second": lambda: torch.cat([torch.ones(2, device="meta"), m]),
    "cpu_tensor_and_meta": lambda: torch.ones(3) + m,
    "meta_list_second": lambda: torch.stack([torch.ones(3), m]),
}
for name, f in cases.items():
    out[name] = outcome(f)
print(json.dumps(out))
"""


def test_mixed_device_arguments_dispatch_as_upstream():
    if not upstream.available():
        pytest.skip(upstream.missing("meta dispatch comparison"))
    ours, up = sides.on_both(PROGRAM)
    rsub = up["rsub_scalar"]
    assert (rsub.get("device"), rsub.get("shape"), rsub.get("dtype")) == ("meta", [3], "float32")
    assert ours == up
