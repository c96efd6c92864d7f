"""DDP's Reducer, Logger and GradBucket, and its C++ helper functions, in Python.

The Reducer copies each parameter's gradient into a flat bucket as autograd accumulates it (a
post-accumulate-grad hook), launches an all-reduce of a bucket once all its gradients are in,
strictly in bucket order (every rank issues the same collectives in the same order), and when
the last bucket is launched waits for them all and writes the averaged gradients back. Without a
communication hook, gradients are scaled by 1/world_size while copied (upstream multiplies by
the reciprocal, not divides) and summed; with one, the hook's future supplies the bucket.
With ``find_unused_parameters``, parameters the outputs do not reach are marked ready at once and
a usage map is all-reduced, so a parameter no rank used keeps its gradient untouched.
"""

from __future__ import annotations

import weakref

from .future import Future

MODULE = "torch._C._distributed_c10d"


class GradBucket:
    def __init__(self, index, num_buckets, buffer, params, offsets):
        self._index, self._num = index, num_buckets
        self._buffer, self._params, self._offsets = buffer, params, offsets

    def index(self) -> int:
        return self._index

    def buffer(self):
        return self._buffer

    def set_buffer(self, tensor) -> None:
        self._buffer = tensor

    def gradients(self):
        return [self._buffer[o:o + p.numel()].view(p.shape) for p, o in zip(self._params, self._offsets)]

    def parameters(self):
        return list(self._params)

    def is_last(self) -> bool:
        return self._index == self._num - 1


class _Bucket:
    def __init__(self, index, params, indices):
        import torch

        self.index, self.params, self.indices = index, params, indices
        self.offsets, total = [], 0
        for p in params:
            self.offsets.append(total)
            total += p.numel()
        self.buffer = torch.zeros(total, dtype=params[0].dtype)
        self.pending = len(params)
        self.future = None

    def view(self, k):
        return self.buffer[self.offsets[k]:self.offsets[k] + self.params[k].numel()]


class Reducer:
    def __init__(self, params, bucket_indices, per_bucket_size_limits, process_group,
                 expect_sparse_gradients=(), bucket_bytes_cap=25 * 1024 * 1024,
                 find_unused_parameters=False, gradient_as_bucket_view=False,
                 param_to_name_mapping=None, first_bucket_bytes_cap=1024 * 1024,
                 skip_all_reduce_unused_params=False, use_python_reducer=False,
                 bucket_bytes_cap_list=None, batched_grad_copy=False):
        if any(expect_sparse_gradients):
            raise NotImplementedError("DistributedDataParallel: sparse gradients are not "
                                      "supported by torchnative's Reducer")
        self._params = list(params)
        self._pg = process_group
        self._find_unused = bool(find_unused_parameters)
        self._bucket_indices = [list(b) for b in bucket_indices]
        self._names = dict(param_to_name_mapping or {})
        self._comm_hook = None
        self._logger = None
        self._expect_hooks = False
        self._finalized = True
        self._static_graph = False
        self._handles = []
        self._where = {}
        for b, idx in enumerate(self._bucket_indices):
            for k, i in enumerate(idx):
                self._where[i] = (b, k)
        for i, p in enumerate(self._params):
            if p.requires_grad:
                self._handles.append(p.register_post_accumulate_grad_hook(self._hook_for(i)))
        self._reset_buckets()

    # -- state per backward ---------------------------------------------------------------------
    def _reset_buckets(self):
        self._buckets = [_Bucket(b, [self._params[i] for i in idx], idx)
                         for b, idx in enumerate(self._bucket_indices)]
        self._next_bucket = 0
        self._used = set()
        self._unused = set()

    def _hook_for(self, i):
        ref = weakref.ref(self)

        def hook(param):
            reducer = ref()
            if reducer is not None:
                reducer._autograd_hook(i)

        return hook

    def prepare_for_forward(self) -> None:
        pass

    def _check_previous_finished(self) -> None:
        if not self._finalized and self._expect_hooks:
            missing = sorted(i for i in range(len(self._params))
                             if i not in self._used and i not in self._unused)
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new "
                "one. This error indicates that your module has parameters that were not used in "
                "producing loss. You can enable unused parameter detection by passing the keyword "
                "argument `find_unused_parameters=True` to `torch.nn.parallel."
                "DistributedDataParallel`.\nParameter indices which did not receive grad for rank "
                f"{self._pg.rank()}: {' '.join(map(str, missing))}")

    def prepare_for_backward(self, outputs) -> None:
        self._check_previous_finished()
        self._reset_buckets()
        self._expect_hooks = True
        self._finalized = False
        if self._find_unused:
            reached = _reachable_params(outputs)
            for i, p in enumerate(self._params):
                if id(p) not in reached:
                    self._unused.add(i)
            for i in sorted(self._unused):
                self._mark_ready(i, used=False)

    def _autograd_hook(self, i) -> None:
        if not self._expect_hooks or self._finalized:
            return  # no_sync(): gradients accumulate locally
        self._mark_ready(i, used=True)

    def _mark_ready(self, i, used: bool) -> None:
        b, k = self._where[i]
        bucket = self._buckets[b]
        p = self._params[i]
        view = bucket.view(k)
        if p.grad is not None:
            view.copy_(p.grad.detach().reshape(-1))
            if self._comm_hook is None:
                view.mul_(1.0 / self._pg.size())
        else:
            view.zero_()
        if used:
            self._used.add(i)
        bucket.pending -= 1
        while self._next_bucket < len(self._buckets) and self._buckets[self._next_bucket].pending == 0:
            self._launch(self._buckets[self._next_bucket])
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finalize()

    def _launch(self, bucket) -> None:
        if bucket.index == 0 and self._find_unused:
            self._launch_used_map()
        grad_bucket = GradBucket(bucket.index, len(self._buckets), bucket.buffer, bucket.params,
                                 bucket.offsets)
        if self._comm_hook is None:
            work = self._pg.allreduce([bucket.buffer])
            bucket.future = work.get_future()
        else:
            state, hook = self._comm_hook
            bucket.future = hook(state, grad_bucket)

    def _launch_used_map(self):
        import torch

        used = torch.zeros(len(self._params), dtype=torch.int32)
        for i in range(len(self._params)):
            if i not in self._unused:
                used[i] = 1
        self._used_map = used
        self._used_map_work = self._pg.allreduce([used])

    def _finalize(self) -> None:
        globally_unused = set()
        if self._find_unused:
            self._used_map_work.wait()
            globally_unused = {i for i in range(len(self._params)) if int(self._used_map[i]) == 0}
        for bucket in self._buckets:
            value = bucket.future.wait()
            result = value[0] if isinstance(value, (list, tuple)) else value
            if result.numel() != bucket.buffer.numel():
                raise RuntimeError("comm hook returned a tensor of the wrong size for bucket "
                                   f"{bucket.index}: {result.numel()} vs {bucket.buffer.numel()}")
            for k, i in enumerate(bucket.indices):
                if i in globally_unused:
                    continue
                p = self._params[i]
                reduced = result[bucket.offsets[k]:bucket.offsets[k] + p.numel()].view(p.shape)
                if p.grad is None:
                    p.grad = reduced.detach().clone()
                else:
                    with _no_grad():
                        p.grad.copy_(reduced)
        self._finalized = True
        self._expect_hooks = False

    # -- the rest of upstream's Reducer API ----------------------------------------------------------
    def _rebuild_buckets(self) -> bool:
        self._check_previous_finished()
        return False  # bucket order does not change the per-element sums

    def _push_all_rebuilt_params(self) -> None:
        pass

    def set_logger(self, logger) -> None:
        self._logger = weakref.ref(logger)

    def get_backward_stats(self):
        return [0] * len(self._params)

    def _set_ddp_runtime_logging_sample_rate(self, sample_rate: int) -> None:
        pass

    def _check_reducer_finalized(self) -> None:
        if not self._finalized:
            raise RuntimeError("Expected to have finished reduction in the prior iteration")

    def _get_local_used_map(self):
        return self._used_map

    def _remove_autograd_hooks(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []

    def _reset_state(self) -> None:
        self._reset_buckets()
        self._expect_hooks = False
        self._finalized = True

    def _update_process_group(self, new_process_group) -> None:
        self._pg = new_process_group

    def _get_zeros_like_grad_buckets(self):
        import torch

        return [GradBucket(b.index, len(self._buckets), torch.zeros_like(b.buffer), b.params,
                           b.offsets) for b in self._buckets]

    def _run_comm_hook(self, bucket):
        if self._comm_hook is None:
            fut = Future()
            work = self._pg.allreduce([bucket.buffer()])
            work.wait()
            fut.set_result([bucket.buffer()])
            return fut
        state, hook = self._comm_hook
        return hook(state, bucket)

    def _unsupported(self, what):
        def refuse(*args, **kwargs):
            raise NotImplementedError(f"Reducer.{what}: not supported by torchnative's Reducer")

        return refuse

    def __getattr__(self, name):
        # names of upstream's Reducer we do not implement refuse by name (only these)
        if name in ("_set_static_graph", "_delay_all_reduce", "_install_post_backward_futures",
                    "_set_forward_pass_work_handle", "_set_mixed_precision_param_dtype",
                    "_set_optimizer_in_backward", "_set_sparse_metadata"):
            return self._unsupported(name)
        raise AttributeError(name)


class _no_grad:
    def __enter__(self):
        import torch

        self._g = torch.no_grad()
        self._g.__enter__()

    def __exit__(self, *exc):
        self._g.__exit__(*exc)


def _reachable_params(outputs) -> set:
    """ids of the leaf tensors the outputs' autograd graphs reach (AccumulateGrad variables)."""
    seen, out, stack = set(), set(), []
    for t in outputs:
        fn = getattr(t, "grad_fn", None)
        if fn is not None:
            stack.append(fn)
        elif getattr(t, "requires_grad", False):
            out.add(id(t))
    while stack:
        fn = stack.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        var = getattr(fn, "variable", None)
        if var is not None:
            out.add(id(var))
        for nxt, _ in getattr(fn, "next_functions", ()):
            if nxt is not None:
                stack.append(nxt)
    return out


class DDPLoggingData:
    def __init__(self):
        self.strs_map: dict[str, str] = {}
        self.ints_map: dict[str, int] = {}


class Logger:
    def __init__(self, reducer):
        self._reducer = reducer
        self._data = DDPLoggingData()

    def set_construction_data_and_log(self, module_name, device_ids, output_device,
                                      broadcast_buffers, has_sync_bn, static_graph):
        d = self._data
        d.strs_map.update(module_name=str(module_name), backend_name=self._reducer._pg.name())
        d.ints_map.update(world_size=self._reducer._pg.size(), rank=self._reducer._pg.rank(),
                          broadcast_buffers=int(bool(broadcast_buffers)),
                          has_sync_bn=int(bool(has_sync_bn)), static_graph=int(bool(static_graph)),
                          find_unused_parameters=int(self._reducer._find_unused))

    def set_runtime_stats_and_log(self):
        self._data.ints_map["iteration"] = self._data.ints_map.get("iteration", 0) + 1

    def set_error_and_log(self, error: str):
        self._data.strs_map["error"] = str(error)

    def _get_ddp_logging_data(self):
        return self._data

    def _set_comm_hook_name(self, comm_hook: str):
        self._data.strs_map["comm_hook"] = str(comm_hook)

    def _set_uneven_input_join(self):
        self._data.ints_map["join_uneven_inputs"] = 1

    def _set_static_graph(self):
        self._data.ints_map["static_graph"] = 1


def _register_comm_hook(reducer, state, comm_hook) -> None:
    if reducer._comm_hook is not None:
        raise RuntimeError("register_comm_hook or register_builtin_comm_hook can only be called once.")
    reducer._comm_hook = (state, comm_hook)


def _register_builtin_comm_hook(reducer, comm_hook_type) -> None:
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    name = getattr(comm_hook_type, "name", str(comm_hook_type))
    hooks = {"ALLREDUCE": default_hooks.allreduce_hook, "FP16_COMPRESS": default_hooks.fp16_compress_hook}
    _register_comm_hook(reducer, reducer._pg, hooks[name])


def _compute_bucket_assignment_by_size(tensors, bucket_size_limits, expect_sparse_gradient=(),
                                       tensor_indices=()):
    """Group tensors (in order, per dtype and device) into buckets of at least the current size
    limit; the first bucket uses the first limit, the rest the last. Sparse gradients go alone.
    Returns (bucket indices sorted by their first tensor, the size limit of each bucket)."""
    if not tensors:
        raise ValueError("Expected a non-empty list of tensors")
    order = list(tensor_indices) if tensor_indices else list(range(len(tensors)))
    open_buckets: dict = {}
    done: list = []
    for i in order:
        t = tensors[i]
        if expect_sparse_gradient and expect_sparse_gradient[i]:
            done.append(([i], bucket_size_limits[0]))
            continue
        key = (t.dtype, str(t.device))
        b = open_buckets.setdefault(key, {"idx": [], "size": 0, "limit": 0})
        b["idx"].append(i)
        b["size"] += t.numel() * t.element_size()
        limit = bucket_size_limits[min(b["limit"], len(bucket_size_limits) - 1)]
        if b["size"] >= limit:
            done.append((b["idx"], limit))
            open_buckets[key] = {"idx": [], "size": 0, "limit": b["limit"] + 1}
    for b in open_buckets.values():
        if b["idx"]:
            done.append((b["idx"], bucket_size_limits[min(b["limit"], len(bucket_size_limits) - 1)]))
    if not tensor_indices:
        done.sort(key=lambda x: min(x[0]))
    return [d[0] for d in done], [d[1] for d in done]


def _verify_params_across_processes(process_group, params, logger=None) -> None:
    """Every rank must hold the same number of parameters with the same shapes."""
    import torch

    meta = [len(params)]
    for p in params:
        meta += [p.dim(), *p.shape]
    mine = torch.tensor(meta, dtype=torch.int64)
    n = torch.tensor([mine.numel()], dtype=torch.int64)
    from .options import AllreduceOptions
    from .reduce_op import RedOpType

    o = AllreduceOptions()
    o.reduceOp = RedOpType.MAX
    process_group.allreduce([n], o).wait()
    padded = torch.full((int(n.item()) + 1,), -1, dtype=torch.int64)
    padded[:mine.numel()] = mine
    outs = [torch.empty_like(padded) for _ in range(process_group.size())]
    process_group.allgather([outs], [padded]).wait()
    for r, other in enumerate(outs):
        if not torch.equal(other, padded):
            count = int(other[0])
            if count != len(params):
                msg = (f"DDP expects same model across all ranks, but Rank {process_group.rank()} "
                       f"has {len(params)} params, while rank {r} has inconsistent {count} params.")
            else:
                msg = (f"DDP expects same model across all ranks, but rank {r} has parameters of "
                       f"other shapes than rank {process_group.rank()}.")
            if logger is not None:
                logger.set_error_and_log(msg)
            raise RuntimeError(msg)


def _broadcast_coalesced(process_group, tensors, buffer_size, src=0) -> None:
    """Broadcast ``tensors`` from ``src`` in flat chunks of at most ``buffer_size`` bytes."""
    import torch

    from .options import BroadcastOptions

    tensors = list(tensors)
    i = 0
    while i < len(tensors):
        group, size = [tensors[i]], tensors[i].numel() * tensors[i].element_size()
        i += 1
        while i < len(tensors) and tensors[i].dtype == group[0].dtype and \
                size + tensors[i].numel() * tensors[i].element_size() <= buffer_size:
            group.append(tensors[i])
            size += tensors[i].numel() * tensors[i].element_size()
            i += 1
        flat = torch.cat([t.detach().reshape(-1) for t in group])
        opts = BroadcastOptions()
        opts.rootRank = int(src)
        process_group.broadcast([flat], opts).wait()
        off = 0
        with torch.no_grad():
            for t in group:
                t.copy_(flat[off:off + t.numel()].view(t.shape))
                off += t.numel()


DDP_CLASSES = {
    "Reducer": Reducer, "Logger": Logger, "GradBucket": GradBucket, "DDPLoggingData": DDPLoggingData,
    "_register_comm_hook": _register_comm_hook,
    "_register_builtin_comm_hook": _register_builtin_comm_hook,
    "_compute_bucket_assignment_by_size": _compute_bucket_assignment_by_size,
    "_verify_params_across_processes": _verify_params_across_processes,
    "_broadcast_coalesced": _broadcast_coalesced,
}
for _c in (Reducer, Logger, GradBucket, DDPLoggingData):
    _c.__module__ = MODULE
