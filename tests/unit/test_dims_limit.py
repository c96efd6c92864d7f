"""Our tensors are numpy arrays: numpy's bound on dimensions is ours, refused by name."""

from __future__ import annotations

import pytest


def test_more_than_64_dimensions_refuse_by_name():
    """Upstream holds tensors of more than 64 dimensions; ours are numpy arrays, which cannot:
    creating one refuses by name instead of leaking numpy's ValueError."""
    import torch

    from torchnative.csrc.core.refuse import TorchnativeNotImplementedError

    assert torch.zeros([1] * 64).dim() == 64
    for make in (lambda: torch.ones([1] * 65), lambda: torch.empty([2] + [1] * 64),
                 lambda: torch.ones([1] * 64).unsqueeze(0)):
        with pytest.raises(TorchnativeNotImplementedError, match="65 dimensions"):
            make()
