"""The per-collective option structs (plain attribute bags with upstream's defaults)."""

from __future__ import annotations

from datetime import timedelta

from .reduce_op import ReduceOp, RedOpType

MODULE = "torch._C._distributed_c10d"
UNSET_TIMEOUT = timedelta(milliseconds=-1)  # kUnsetTimeout: use the backend's timeout


def _options(name: str, fields: dict, base=object):
    def __init__(self):
        if base is not object:
            base.__init__(self)
        for k, v in fields.items():
            setattr(self, k, v() if callable(v) else v)

    def __repr__(self):
        return f"{name}({', '.join(f'{k}={getattr(self, k)!r}' for k in vars(self))})"

    cls = type(name, (base,), {"__init__": __init__, "__repr__": __repr__, "__module__": MODULE})
    return cls


_common = {"timeout": UNSET_TIMEOUT, "asyncOp": True}
BroadcastOptions = _options("BroadcastOptions", {"rootRank": 0, "rootTensor": 0, **_common})
AllreduceOptions = _options("AllreduceOptions", {"reduceOp": lambda: ReduceOp(RedOpType.SUM),
                                                 "sparseIndices": None, **_common})
AllreduceCoalescedOptions = _options("AllreduceCoalescedOptions", {}, AllreduceOptions)
ReduceOptions = _options("ReduceOptions", {"reduceOp": lambda: ReduceOp(RedOpType.SUM),
                                           "rootRank": 0, "rootTensor": 0, **_common})
AllgatherOptions = _options("AllgatherOptions", dict(_common))
GatherOptions = _options("GatherOptions", {"rootRank": 0, **_common})
ScatterOptions = _options("ScatterOptions", {"rootRank": 0, **_common})
ReduceScatterOptions = _options("ReduceScatterOptions",
                                {"reduceOp": lambda: ReduceOp(RedOpType.SUM), **_common})
BarrierOptions = _options("BarrierOptions", {"device_ids": list, "device": None, **_common})
AllToAllOptions = _options("AllToAllOptions", dict(_common))


class _DistributedBackendOptions:
    def __init__(self):
        self.store = None
        self.group_rank = -1
        self.group_size = -1
        self.timeout = timedelta(minutes=30)
        self.group_id = ""
        self.global_ranks_in_group = []


_DistributedBackendOptions.__module__ = MODULE

ALL = [BroadcastOptions, AllreduceOptions, AllreduceCoalescedOptions, ReduceOptions,
       AllgatherOptions, GatherOptions, ScatterOptions, ReduceScatterOptions, BarrierOptions,
       AllToAllOptions, _DistributedBackendOptions]
