"""ProcessGroup (the front object torch.distributed holds) and Backend (what runs collectives).

A ProcessGroup owns one backend per device type and forwards each collective to the backend of
its tensors' device, as upstream's dispatcher does. Its methods accept both of upstream's call
forms: ``(tensors, opts)`` and the convenience ``(tensor, root/op, timeout)`` overloads.
"""

from __future__ import annotations

import enum
from datetime import timedelta

from . import options as O
from .reduce_op import ReduceOp, RedOpType

MODULE = "torch._C._distributed_c10d"


class BackendType(enum.Enum):
    UNDEFINED = 0
    GLOO = 1
    NCCL = 2
    UCC = 3
    MPI = 4
    XCCL = 5
    CUSTOM = 6

    def __int__(self):
        return self.value


BackendType.__qualname__ = "ProcessGroup.BackendType"
BackendType.__module__ = MODULE


class _BackendOptions:
    def __init__(self, backend: str = "", timeout: timedelta = timedelta(minutes=30)):
        self._backend = backend
        self._timeout = timeout
        self.global_ranks_in_group = []
        self.group_name = ""
        self.use_pg_for_symm_mem_rendezvous = False

    @property
    def backend(self) -> str:
        return self._backend


_BackendOptions.__name__ = _BackendOptions.__qualname__ = "Options"


class Backend:
    Options = _BackendOptions

    def __init__(self, rank: int, size: int):
        self._rank, self._size = int(rank), int(size)
        self._backend_options = _BackendOptions("", timedelta(minutes=30))

    @property
    def supports_splitting(self) -> bool:
        return False

    @property
    def supports_coalescing(self) -> bool:
        return False

    @property
    def supports_time_estimate(self) -> bool:
        return False

    @property
    def options(self):
        return self._backend_options

    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def name(self) -> str:
        return type(self).__name__

    def set_timeout(self, timeout: timedelta) -> None:
        self._backend_options._timeout = timeout

    def _set_default_timeout(self, timeout: timedelta) -> None:
        self.set_timeout(timeout)

    def _set_sequence_number_for_group(self) -> None:
        pass

    def _get_sequence_number_for_group(self) -> int:
        return 0

    def abort(self) -> None:
        pass

    def shutdown(self) -> None:
        pass

    def eager_connect_single_device(self, device) -> None:
        pass

    def supports_tensor_alloc(self, device) -> bool:
        return False

    def _unsupported(self, what: str):
        raise RuntimeError(f"Backend {self.name()} does not support {what}")

    def _set_group_name(self, name):
        self._group_name = name

    def _set_group_desc(self, desc):
        self._group_desc = desc

    @property
    def group_name(self):
        return getattr(self, "_group_name", "")

    @property
    def group_desc(self):
        return getattr(self, "_group_desc", "")


Backend.__module__ = MODULE
_BackendOptions.__qualname__ = "Backend.Options"
_BackendOptions.__module__ = MODULE


def _opaque_meta():
    # upstream registers ProcessGroup as an opaque reference type, which requires this metaclass
    from torch._opaque_base import OpaqueBaseMeta

    return OpaqueBaseMeta


def _timeout_opts(opts, timeout):
    if timeout is not None:
        opts.timeout = timeout
    return opts


def _as_op(op):
    return op if op is not None else ReduceOp(RedOpType.SUM)


def _tensor_list(x):
    import torch

    return [x] if isinstance(x, torch.Tensor) else list(x)


class ProcessGroup(metaclass=_opaque_meta()):
    BackendType = BackendType

    def __init__(self, store, rank: int, size: int):
        self._store = store
        self._rank, self._size = int(rank), int(size)
        self._backends: dict[str, Backend] = {}
        self._backend_types: dict[str, BackendType] = {}
        self._default_backend_type = BackendType.UNDEFINED
        self._group_name = ""
        self._group_desc = ""
        self.bound_device_id = None
        self.use_pg_for_symm_mem_rendezvous = False
        self._coalescing: list | None = None

    # -- identity -------------------------------------------------------------------------------
    def rank(self) -> int:
        return self._rank

    def size(self) -> int:
        return self._size

    def get_group_store(self):
        return self._store

    def name(self) -> str:
        return self._get_backend_name()

    def _get_backend_name(self) -> str:
        b = self._backends.get("cpu") or next(iter(self._backends.values()), None)
        if b is None:
            return "undefined"
        return {"ProcessGroupGloo": "gloo"}.get(type(b).__name__, b.name())

    @property
    def group_name(self):
        return self._group_name

    @property
    def group_desc(self):
        return self._group_desc

    def _set_group_name(self, name) -> None:
        self._group_name = name
        for b in self._backends.values():
            b._set_group_name(name)

    def _set_group_desc(self, desc) -> None:
        self._group_desc = desc
        for b in self._backends.values():
            b._set_group_desc(desc)

    @property
    def _device_types(self):
        import torch

        return [torch.device(d) for d in self._backends]

    def _set_default_backend(self, backend_type: BackendType) -> None:
        self._default_backend_type = backend_type

    def _register_backend(self, device, backend_type: BackendType, backend) -> None:
        dev = str(getattr(device, "type", device))
        self._backends[dev] = backend
        self._backend_types[dev] = backend_type

    def _get_backend(self, device):
        dev = str(getattr(device, "type", device))
        if dev not in self._backends:
            raise RuntimeError(f"No backend type associated with device type {dev}")
        return self._backends[dev]

    def _backend_id(self, backend_type: BackendType) -> int:
        for dev, bt in self._backend_types.items():
            if bt == backend_type:
                return id(self._backends[dev])
        raise RuntimeError(f"Could not find backend for type {backend_type}")

    def _has_hooks(self) -> bool:
        return False

    def _wait_for_pending_works(self) -> None:
        for b in self._backends.values():
            if hasattr(b, "_wait_for_pending_works"):
                b._wait_for_pending_works()

    def _set_sequence_number_for_group(self) -> None:
        for b in self._backends.values():
            b._set_sequence_number_for_group()

    def _get_sequence_number_for_group(self) -> int:
        b = self._backends.get("cpu")
        return b._get_sequence_number_for_group() if b else 0

    def abort(self) -> None:
        for b in self._backends.values():
            b.abort()

    def shutdown(self) -> None:
        for b in self._backends.values():
            b.shutdown()

    def set_timeout(self, timeout: timedelta) -> None:
        for b in self._backends.values():
            b.set_timeout(timeout)

    def boxed(self):
        return self

    @staticmethod
    def unbox(obj):
        return obj

    def split_group(self, new_ranks, timeout=None, opts=None, group_name=None, group_desc=None,
                    device_types=None):
        raise NotImplementedError("ProcessGroup.split_group: communicator splitting is not "
                                  "supported by torchnative's gloo backend (use new_group)")

    def merge_remote_group(self, *args, **kwargs):
        raise NotImplementedError("ProcessGroup.merge_remote_group: not supported by torchnative")

    # -- dispatch -------------------------------------------------------------------------------
    def _backend_for(self, tensors):
        dev = "cpu"
        for t in tensors:
            dev = t.device.type
            break
        return self._get_backend(dev)

    def _start_coalescing(self, device) -> None:
        b = self._get_backend(device)
        if not hasattr(b, "_start_coalescing"):
            raise RuntimeError(f"Backend {b.name()} does not support coalescing")
        b._start_coalescing()

    def _end_coalescing(self, device):
        return self._get_backend(device)._end_coalescing()

    # -- collectives (both call forms) -------------------------------------------------------
    def broadcast(self, tensors, opts=None, timeout=None):
        if not isinstance(opts, (O.BroadcastOptions, type(None))):  # (tensor, root, timeout)
            root, opts = opts, O.BroadcastOptions()
            opts.rootRank = int(root)
        tensors = _tensor_list(tensors)
        return self._backend_for(tensors).broadcast(tensors, _timeout_opts(opts or O.BroadcastOptions(), timeout))

    def allreduce(self, tensors, opts=None, timeout=None):
        if not isinstance(opts, (O.AllreduceOptions, type(None))):  # (tensors, op, timeout)
            op, opts = opts, O.AllreduceOptions()
            opts.reduceOp = _as_op(op)
        tensors = _tensor_list(tensors)
        return self._backend_for(tensors).allreduce(tensors, _timeout_opts(opts or O.AllreduceOptions(), timeout))

    def allreduce_coalesced(self, tensors, opts=None):
        tensors = list(tensors)
        return self._backend_for(tensors).allreduce_coalesced(tensors, opts or O.AllreduceCoalescedOptions())

    def reduce(self, tensors, opts=None, op=None, timeout=None):
        if not isinstance(opts, (O.ReduceOptions, type(None))):  # (tensor, root, op, timeout)
            root, opts = opts, O.ReduceOptions()
            opts.rootRank = int(root)
            opts.reduceOp = _as_op(op)
        tensors = _tensor_list(tensors)
        return self._backend_for(tensors).reduce(tensors, _timeout_opts(opts or O.ReduceOptions(), timeout))

    def allgather(self, output_tensors, input_tensors, opts=None):
        import torch

        if isinstance(input_tensors, torch.Tensor):  # (outputs, input, timeout)
            timeout, opts = opts, O.AllgatherOptions()
            output_tensors, input_tensors = [list(output_tensors)], [input_tensors]
            _timeout_opts(opts, timeout)
        return self._backend_for(input_tensors).allgather(
            [list(o) for o in output_tensors], list(input_tensors), opts or O.AllgatherOptions())

    def _allgather_base(self, output, input, opts=None):
        return self._backend_for([input])._allgather_base(output, input, opts or O.AllgatherOptions())

    all_gather_single = _allgather_base

    def allgather_coalesced(self, output_lists, input_list, opts=None):
        return self._backend_for(input_list).allgather_coalesced(
            [list(o) for o in output_lists], list(input_list), opts or O.AllgatherOptions())

    def allgather_into_tensor_coalesced(self, outputs, inputs, opts=None):
        return self._backend_for(inputs).allgather_into_tensor_coalesced(
            list(outputs), list(inputs), opts or O.AllgatherOptions())

    all_gather_single_coalesced = allgather_into_tensor_coalesced

    def gather(self, output_tensors, input_tensors, opts=None, timeout=None):
        import torch

        if isinstance(input_tensors, torch.Tensor):  # (outputs, input, root, timeout)
            root, opts = opts, O.GatherOptions()
            opts.rootRank = int(root)
            _timeout_opts(opts, timeout)
            output_tensors, input_tensors = [list(output_tensors)], [input_tensors]
        return self._backend_for(input_tensors).gather(
            [list(o) for o in output_tensors], list(input_tensors), opts or O.GatherOptions())

    def scatter(self, output_tensors, input_tensors, opts=None, timeout=None):
        import torch

        if isinstance(output_tensors, torch.Tensor):  # (output, inputs, root, timeout)
            root, opts = opts, O.ScatterOptions()
            opts.rootRank = int(root)
            _timeout_opts(opts, timeout)
            output_tensors, input_tensors = [output_tensors], [list(input_tensors)]
        return self._backend_for(output_tensors).scatter(
            list(output_tensors), [list(i) for i in input_tensors], opts or O.ScatterOptions())

    def reduce_scatter(self, output_tensors, input_tensors, opts=None, timeout=None):
        import torch

        if isinstance(output_tensors, torch.Tensor):  # (output, inputs, op, timeout)
            op, opts = opts, O.ReduceScatterOptions()
            opts.reduceOp = _as_op(op)
            _timeout_opts(opts, timeout)
            output_tensors, input_tensors = [output_tensors], [list(input_tensors)]
        return self._backend_for(output_tensors).reduce_scatter(
            list(output_tensors), [list(i) for i in input_tensors], opts or O.ReduceScatterOptions())

    def _reduce_scatter_base(self, output, input, opts=None):
        return self._backend_for([input])._reduce_scatter_base(output, input, opts or O.ReduceScatterOptions())

    reduce_scatter_single = _reduce_scatter_base

    def reduce_scatter_tensor_coalesced(self, outputs, inputs, opts=None):
        return self._backend_for(inputs).reduce_scatter_tensor_coalesced(
            list(outputs), list(inputs), opts or O.ReduceScatterOptions())

    reduce_scatter_single_coalesced = reduce_scatter_tensor_coalesced

    def alltoall_base(self, output, input, output_split_sizes, input_split_sizes, opts=None):
        if isinstance(opts, timedelta):
            opts = _timeout_opts(O.AllToAllOptions(), opts)
        return self._backend_for([input]).alltoall_base(
            output, input, list(output_split_sizes), list(input_split_sizes), opts or O.AllToAllOptions())

    all_to_all_single = alltoall_base

    def alltoall(self, output_tensors, input_tensors, opts=None):
        if isinstance(opts, timedelta):
            opts = _timeout_opts(O.AllToAllOptions(), opts)
        return self._backend_for(input_tensors).alltoall(
            list(output_tensors), list(input_tensors), opts or O.AllToAllOptions())

    def send(self, tensors, dstRank: int, tag: int = 0):
        return self._backend_for(tensors).send(list(tensors), int(dstRank), int(tag))

    def recv(self, tensors, srcRank: int, tag: int = 0):
        return self._backend_for(tensors).recv(list(tensors), int(srcRank), int(tag))

    def recv_anysource(self, tensors, tag: int = 0):
        return self._backend_for(tensors).recv_anysource(list(tensors), int(tag))

    def barrier(self, opts=None, timeout=None):
        if isinstance(opts, timedelta):
            opts, timeout = None, opts
        opts = _timeout_opts(opts or O.BarrierOptions(), timeout)
        dev = getattr(opts, "device", None)
        backend = self._get_backend(dev.type if dev is not None else
                                    ("cpu" if "cpu" in self._backends else next(iter(self._backends))))
        return backend.barrier(opts)

    def monitored_barrier(self, timeout=None, wait_all_ranks: bool = False):
        return self._get_backend("cpu").monitored_barrier(timeout, wait_all_ranks)

    def __repr__(self):
        return f"<ProcessGroup rank={self._rank} size={self._size} name={self._group_name!r}>"


ProcessGroup.__module__ = MODULE
