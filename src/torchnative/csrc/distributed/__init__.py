"""c10d in Python: what upstream's compiled torch._C._distributed_c10d provides, behind the
unmodified torch/distributed/*.py. ``torch_c_names`` lists what this package puts on torch._C.

Backends other than gloo (NCCL, MPI, UCC, XCCL), RPC, distributed autograd and symmetric memory
are absent, so upstream's own availability checks report them not built.
"""

from __future__ import annotations

from datetime import timedelta

C10D = "torch._C._distributed_c10d"


def _c10d_init() -> bool:
    return True


def _has_distributed() -> bool:
    return True


def torch_c_names() -> dict[str, object]:
    from ..core.refuse import refusing_class, refusing_function
    from . import errors, future, options, placements, registry, store, tcp_store, work
    from .fake_backend import FakeProcessGroup
    from .file_store import FileStore
    from .gloo import ProcessGroupGloo
    from .process_group import Backend, ProcessGroup
    from .reduce_op import ReduceOp
    from .reducer import DDP_CLASSES
    from .wait_counter import _WaitCounter

    out: dict[str, object] = {
        "torch._C._c10d_init": _c10d_init,
        "torch._C._has_distributed": _has_distributed,
        "torch._C.Future": future.Future,
        "torch._C._collect_all": future.collect_all,
        "torch._C._monitor._WaitCounter": _WaitCounter,
    }
    for name, cls in errors.TORCH_C_NAMES.items():
        out[f"torch._C.{name}"] = cls
    for cls in (placements.Placement, placements.Shard, placements.StridedShard,
                placements.Replicate, placements.Partial):
        out[f"torch._C._distributed.{cls.__name__}"] = cls
    c10d = {
        "Store": store.Store, "HashStore": store.HashStore, "PrefixStore": store.PrefixStore,
        "FileStore": FileStore, "TCPStore": tcp_store.TCPStore,
        "ReduceOp": ReduceOp, "ProcessGroup": ProcessGroup, "Backend": Backend,
        "ProcessGroupGloo": ProcessGroupGloo, "Work": work.Work,
        "FakeProcessGroup": FakeProcessGroup,
        "PythonCallbackWork": work.PythonCallbackWork, "FakeWork": work.FakeWork,
        "_create_work_from_future": work._create_work_from_future,
        "_DEFAULT_FIRST_BUCKET_BYTES": 1024 * 1024,
        "_DEFAULT_NO_TIMEOUT": timedelta(0),
        "_DEFAULT_PG_TIMEOUT": timedelta(minutes=30),
        "_ControlCollectives": registry._ControlCollectives,
        "_StoreCollectives": registry._StoreCollectives,
        "_make_nccl_premul_sum": refusing_function(
            f"{C10D}._make_nccl_premul_sum", "NCCL is not built in torchnative"),
        "_ProcessGroupWrapper": refusing_class(
            f"{C10D}._ProcessGroupWrapper",
            "the debug wrapper (TORCH_DISTRIBUTED_DEBUG=DETAIL) is not implemented in torchnative"),
        "_SymmetricMemory": refusing_class(
            f"{C10D}._SymmetricMemory", "symmetric memory is not built in torchnative"),
    }
    for cls in options.ALL:
        c10d[cls.__name__] = cls
    for name in ("_register_process_group", "_resolve_process_group", "_unregister_process_group",
                 "_unregister_all_process_groups", "_set_process_group", "_current_process_group",
                 "_register_work", "_get_work_registry_size", "_set_thread_isolation_mode",
                 "_allow_inflight_collective_as_graph_input",
                 "_set_allow_inflight_collective_as_graph_input", "_set_global_rank",
                 "_get_comm_profiling_name", "_set_comm_profiling_name", "get_debug_level",
                 "set_debug_level", "set_debug_level_from_env", "_hash_tensors",
                 "_test_python_store"):
        c10d[name] = getattr(registry, name)
    c10d.update(DDP_CLASSES)
    out.update({f"{C10D}.{k}": v for k, v in c10d.items()})
    return out
