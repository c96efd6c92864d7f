"""``memory_format=torch.preserve_format`` (the default of ``clone``, ``empty_like``,
``*_like`` and ``.to(dtype)``) on inputs that are strided but not dense: upstream gives dense
strides in the input's memory order (``infer_dense_strides``), not contiguous ones; dense
inputs keep their strides, channels-last ones theirs. Compared with upstream, stride for stride."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json
import torch

cases = {
    "transposed_slice": torch.rand(4, 6)[:, ::2].t(),
    "permuted_slice": torch.rand(2, 3, 4, 5).permute(0, 2, 3, 1)[:, ::2],
    "expanded": torch.rand(3, 4).expand(2, 3, 4),
    "channels_last_sliced": torch.rand(2, 3, 8, 8)[..., ::2]
        .contiguous(memory_format=torch.channels_last)[..., 1:],
    "channels_last_strided": torch.rand(2, 3, 4, 4).to(memory_format=torch.channels_last)[:, :, ::2],
    "dense_permuted": torch.rand(2, 3, 4).permute(2, 0, 1),
}
out = {}
for name, t in cases.items():
    out[name] = [t.to(torch.float64).stride(), t.clone().stride(), torch.empty_like(t).stride(),
                 torch.zeros_like(t, dtype=torch.int32).stride(),
                 torch.full_like(t, 2.0).stride(),
                 t.clone(memory_format=torch.contiguous_format).stride(),
                 (t * 1).stride()]
print(json.dumps(out))
'''


def test_preserve_format_strides_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    # upstream keeps the transposed slice's memory order: (1, 3), not contiguous (4, 1)
    assert theirs["transposed_slice"][0] == [1, 3]
    assert ours == theirs
