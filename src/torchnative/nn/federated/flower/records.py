"""Tensors to Flower records and back. Flower never imports torch: it recognizes a tensor with
``isinstance(v, sys.modules["torch"].Tensor)``, reads it with ``.numpy()`` and rebuilds it with
``torch.from_numpy`` -- whichever torch the process runs."""

from __future__ import annotations

from collections import OrderedDict

import torch
from flwr.app import ArrayRecord


def to_record(tensors: dict[str, torch.Tensor]) -> ArrayRecord:
    return ArrayRecord(OrderedDict((k, v.detach().contiguous()) for k, v in tensors.items()))


def from_record(record: ArrayRecord, names: list[str] | None = None) -> dict[str, torch.Tensor]:
    tensors = record.to_torch_state_dict()
    if names is not None and list(tensors) != list(names):
        raise ValueError(f"the record holds {list(tensors)}, expected {list(names)}")
    return dict(tensors)
