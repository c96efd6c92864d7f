"""FakeProcessGroup: upstream's testing backend that performs no communication at all.

Every collective returns a completed FakeWork and leaves the tensors as they are, as upstream's
does ("it would produce wrong results for every collective"); it exists for single-process
simulations and is only used when a program asks for the "fake" backend.
"""

from __future__ import annotations

from .process_group import Backend
from .work import FakeWork


def _fake(self, *args, **kwargs):
    return FakeWork()


class FakeProcessGroup(Backend):
    @staticmethod
    def _create_internal(rank: int, world_size: int, options=None):
        return FakeProcessGroup(rank, world_size)

    def name(self) -> str:
        return "fake"


for _name in ("broadcast", "allreduce", "allreduce_coalesced", "reduce", "allgather",
              "_allgather_base", "allgather_coalesced", "allgather_into_tensor_coalesced", "gather",
              "scatter", "reduce_scatter", "_reduce_scatter_base", "reduce_scatter_tensor_coalesced",
              "alltoall_base", "alltoall", "send", "recv", "recv_anysource", "barrier"):
    setattr(FakeProcessGroup, _name, _fake)
FakeProcessGroup.__module__ = "torch._C._distributed_c10d"
