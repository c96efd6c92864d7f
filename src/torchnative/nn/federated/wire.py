"""Messages between the coordinator and one participant over their two-rank process group.

Only tensors travel (no pickling): a fixed int64 header, then the payload. Every header carries
the round number. Coordinator -> participant: [MAGIC, round, command, numel] then the global
model's covered tensors, flattened. Participant -> coordinator: [MAGIC, round, participant,
num_samples, n_tensors, shape_len, numel, dtype] then the shapes ([ndim, dims...] per tensor) and
the flattened update. The coordinator reads the header first, so a payload over the cap or a
malformed header is refused before any payload buffer is allocated.
"""

from __future__ import annotations

import datetime

import torch

MAGIC = 0x46454452  # "FEDR"
# REFUSED carries the reason as UTF-8 bytes; numel < 0 means the link is closed after it
TRAIN, STOP, REFUSED = 1, 0, 2
DOWN_LEN, UP_LEN = 4, 8
# integer payloads are for transforms that send field elements (secure aggregation)
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32]
CODES = {dt: i for i, dt in enumerate(DTYPES)}
MAX_NDIM = 8


def _wait(work, timeout: float):
    work.wait(datetime.timedelta(seconds=timeout))


def send(pg, peer: int, tensor: torch.Tensor, timeout: float) -> None:
    _wait(pg.send([tensor.contiguous()], peer, 0), timeout)


def recv(pg, peer: int, tensor: torch.Tensor, timeout: float) -> torch.Tensor:
    _wait(pg.recv([tensor], peer, 0), timeout)
    return tensor


def flatten(tensors: dict) -> torch.Tensor:
    return torch.cat([t.detach().reshape(-1) for t in tensors.values()]) if tensors else torch.empty(0)


def unflatten(flat: torch.Tensor, shapes: list) -> list:
    out, at = [], 0
    for shape in shapes:
        k = 1
        for s in shape:
            k *= int(s)
        out.append(flat[at:at + k].reshape(shape))
        at += k
    return out


def encode_shapes(shapes: list) -> torch.Tensor:
    vals = []
    for s in shapes:
        vals.append(len(s))
        vals.extend(int(d) for d in s)
    return torch.tensor(vals, dtype=torch.int64)


def decode_shapes(t: torch.Tensor, n: int) -> list:
    vals, shapes, at = t.tolist(), [], 0
    for _ in range(n):
        nd = vals[at]
        if not 0 <= nd <= MAX_NDIM or at + 1 + nd > len(vals):
            raise ValueError("malformed shape header")
        shapes.append(tuple(vals[at + 1:at + 1 + nd]))
        at += 1 + nd
    if at != len(vals):
        raise ValueError("malformed shape header")
    return shapes


def down_header(round: int, command: int, numel: int) -> torch.Tensor:
    return torch.tensor([MAGIC, round, command, numel], dtype=torch.int64)


def up_header(round, participant, num_samples, n_tensors, shape_len, numel, dtype) -> torch.Tensor:
    return torch.tensor([MAGIC, round, participant, num_samples, n_tensors, shape_len, numel,
                         CODES[dtype]], dtype=torch.int64)
