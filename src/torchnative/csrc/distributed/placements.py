"""torch._C._distributed: the DTensor placement bases (Shard, StridedShard, Replicate, Partial).

Upstream's Python subclasses them in torch/distributed/tensor/placement_types.py; the bases
hold the fields and answer the is_* questions. Fields are read-only properties, as upstream's.
"""

from __future__ import annotations

MODULE = "torch._C._distributed"


class Placement:
    def is_shard(self, dim: int | None = None) -> bool:
        return False

    def is_replicate(self) -> bool:
        return False

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return False

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    __hash__ = None  # upstream's bases are unhashable; subclasses define hashing

    def _key(self):
        return ()


class Shard(Placement):
    def __init__(self, dim: int):
        self._dim = int(dim)

    @property
    def dim(self) -> int:
        return self._dim

    def is_shard(self, dim: int | None = None) -> bool:
        return dim is None or dim == self._dim

    def _key(self):
        return (self._dim,)

    def __repr__(self):
        return f"Shard(dim={self._dim})"


class StridedShard(Placement):
    def __init__(self, dim: int, *, split_factor: int):
        self._dim = int(dim)
        self._split_factor = int(split_factor)

    dim = Shard.dim
    is_shard = Shard.is_shard

    @property
    def split_factor(self) -> int:
        return self._split_factor

    def _key(self):
        return (self._dim, self._split_factor)

    def __repr__(self):
        return f"_StridedShard(dim={self._dim}, sf={self._split_factor})"


class Replicate(Placement):
    def is_replicate(self) -> bool:
        return True

    def __repr__(self):
        return "Replicate()"


class Partial(Placement):
    def __init__(self, reduce_op: str | None = None):
        self._reduce_op = "sum" if reduce_op is None else str(reduce_op)

    @property
    def reduce_op(self) -> str:
        return self._reduce_op

    def is_partial(self, reduce_op: str | None = None) -> bool:
        return reduce_op is None or reduce_op == self._reduce_op

    def _key(self):
        return (self._reduce_op,)

    def __repr__(self):
        return f"Partial({self._reduce_op})"


for _cls in (Placement, Shard, StridedShard, Replicate, Partial):
    _cls.__module__ = MODULE
