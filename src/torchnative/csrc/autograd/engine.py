"""torch._C._ImperativeEngine: the object torch.autograd runs backward passes through.

As upstream's engine (torch/csrc/autograd/engine.cpp), single-threaded: count the dependencies
of every node reachable from the roots, then execute nodes whose inputs are complete, highest
sequence number first (AccumulateGrad nodes as soon as they are ready), accumulating gradients per
input in an input buffer. With ``inputs`` the pass runs only the nodes that lead to them; for
``torch.autograd.grad`` (accumulate_grad=False) the gradients reaching the inputs are captured
instead of accumulated.
"""

from __future__ import annotations

import heapq
import itertools

from ..core.tensor import TensorBase
from ..core.grad_mode import TLS as _GRAD
from ..dispatch.call import call
from .accumulate import accumulate_grad as _accumulate_into, forget_fresh
from .function import _FunctionBase
from .graph_task import TLS
from .manual.reduction import sum_to
from .node import ANOMALY as _Anomaly, AccumulateGrad, GraphRoot, gradient_edge
from ..platform.torch_warn import torch_warn


_TASKS = itertools.count()


def current_needed():
    return TLS.needed


class ImperativeEngine:
    def __init__(self):
        self._callbacks: list = []

    def run_backward(self, tensors, grad_tensors, keep_graph, create_graph, inputs=(),
                     allow_unreachable=False, accumulate_grad=True):
        return run_backward(tensors, grad_tensors, keep_graph, create_graph, inputs,
                            allow_unreachable, accumulate_grad)

    def queue_callback(self, callback) -> None:
        if TLS.callbacks is None:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        TLS.callbacks.append(callback)

    def is_checkpoint_valid(self) -> bool:
        return True  # one engine thread: reentrant checkpoints are always valid


def _output_edge(x):
    if isinstance(x, TensorBase):
        e = gradient_edge(x)
        return e
    # torch.autograd.graph.GradientEdge
    return (x.node, x.output_nr)


# Installed by the functorch layer: True while a torch.func grad transform is active. Its levels
# share this one graph, so a level's backward leaves the graph for the levels around it.
keep_graph_for_transforms: list = [lambda: False]


def run_backward(tensors, grad_tensors, keep_graph, create_graph, inputs, allow_unreachable,
                 accumulate_grad):
    from .batched import is_batched, run_batched

    if not keep_graph and keep_graph_for_transforms[0]():
        keep_graph = True

    if any(is_batched(g) for g in grad_tensors):
        return run_batched(_run_backward, tensors, grad_tensors, keep_graph, create_graph,
                           inputs, allow_unreachable, accumulate_grad)
    return _run_backward(tensors, grad_tensors, keep_graph, create_graph, inputs,
                         allow_unreachable, accumulate_grad)


def _run_backward(tensors, grad_tensors, keep_graph, create_graph, inputs, allow_unreachable,
                  accumulate_grad):
    roots = []
    for i, t in enumerate(tensors):
        if isinstance(t, TensorBase):
            edge = gradient_edge(t)
            if edge[0] is None:
                raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                                   "have a grad_fn")
        else:
            edge = (t.node, t.output_nr)
        roots.append(edge)
    grads = list(grad_tensors)
    outputs = []
    for i, x in enumerate(inputs or ()):
        edge = _output_edge(x)
        if edge[0] is None:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        outputs.append(edge)
    if not accumulate_grad and not outputs:
        raise RuntimeError("grad requires non-empty inputs.")
    root = GraphRoot(roots, grads)
    nonleaf = None
    if accumulate_grad and outputs:
        # backward(inputs=[non-leaf]) accumulates into the non-leaf's .grad too
        nonleaf = [i for i, x in enumerate(inputs) if isinstance(x, TensorBase) and
                   not isinstance(outputs[i][0], AccumulateGrad)]
    result = execute(root, outputs, keep_graph, create_graph, accumulate_grad, nonleaf)
    if nonleaf:
        prev = _GRAD.grad_enabled
        _GRAD.grad_enabled = bool(create_graph)
        try:
            for i in nonleaf:
                if result[i] is not None:
                    _accumulate_into(inputs[i], result[i])
        finally:
            _GRAD.grad_enabled = prev
    if not accumulate_grad:
        for i, g in enumerate(result):
            if g is None and not allow_unreachable:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   "been used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
        return tuple(result)
    return ()


def _dependencies(root):
    deps = {}
    seen = {root}
    stack = [root]
    while stack:
        fn = stack.pop()
        for nxt, _ in fn._next:
            if nxt is None:
                continue
            deps[nxt] = deps.get(nxt, 0) + 1
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return deps, seen


def _needed(root, seen, targets):
    """Nodes on a path from the root to a target node (upstream's exec_info)."""
    needed = set()
    memo = {}
    # iterative post-order DFS
    stack = [(root, iter(root._next))]
    on = {root}
    while stack:
        fn, it = stack[-1]
        advanced = False
        for nxt, _ in it:
            if nxt is None:
                continue
            if nxt in memo:
                if memo[nxt]:
                    memo[fn] = True
                continue
            if nxt in on:
                continue
            on.add(nxt)
            stack.append((nxt, iter(nxt._next)))
            advanced = True
            break
        if advanced:
            continue
        stack.pop()
        r = memo.get(fn, False) or fn in targets
        memo[fn] = r
        if r:
            needed.add(fn)
            if stack:
                memo[stack[-1][0]] = True
    return needed


def execute(root, outputs, keep_graph, create_graph, accumulate_grad, capture_idx=None):
    deps, seen = _dependencies(root)
    captures = None
    needed = None
    if outputs:
        targets = {fn for fn, _ in outputs}
        if capture_idx:
            captures = {}
            for k in capture_idx:
                fn, nr = outputs[k]
                captures.setdefault(fn, []).append((nr, k))
        if not accumulate_grad:
            captures = {}
            for k, (fn, nr) in enumerate(outputs):
                captures.setdefault(fn, []).append((nr, k))
            # capture points are reached but not executed unless needed for another output
            needed = _needed(root, seen, targets)
            needed -= {fn for fn in targets if isinstance(fn, AccumulateGrad)}
            needed.add(root)
            needed_exec = set()
            for fn in needed:
                if fn in targets and not any(
                        n in needed for n, _ in fn._next if n is not None):
                    continue
                needed_exec.add(fn)
            needed = needed_exec | {root}
        else:
            needed = _needed(root, seen, targets)
            needed.add(root)
    captured = [None] * len(outputs)
    prev = (TLS.needed, TLS.callbacks, TLS.task_id, TLS.node, TLS.graph)
    TLS.needed = needed if not captures else needed | set(captures)
    TLS.callbacks = []
    TLS.task_id = next(_TASKS)
    TLS.graph = seen
    TLS.depth += 1
    prev_grad = _GRAD.grad_enabled
    _GRAD.grad_enabled = bool(create_graph)
    try:
        _loop(root, deps, needed, captures, captured, keep_graph, create_graph)
        callbacks = TLS.callbacks
        i = 0
        while i < len(callbacks):
            callbacks[i]()
            i += 1
    finally:
        _GRAD.grad_enabled = prev_grad
        TLS.needed, TLS.callbacks, TLS.task_id, TLS.node, TLS.graph = prev
        TLS.depth -= 1
    return captured


_NEG_INF = -float("inf")  # AccumulateGrad runs as soon as it is ready


def _loop(root, deps, needed, captures, captured, keep_graph, create_graph) -> None:
    """Run the nodes in dependency order, highest sequence number first, summing the
    gradients that reach each input in its buffer."""
    heappop, heappush = heapq.heappop, heapq.heappush
    task_id = TLS.task_id
    buffers = {root: []}
    ready = [(-root._seq, 0, root)]
    counter = 1
    while ready:
        fn = heappop(ready)[2]
        inputs = buffers.pop(fn, None) or []
        if fn is not root:
            n_in = len(fn._input_meta) or 1
            if len(inputs) < n_in:
                inputs = inputs + [None] * (n_in - len(inputs))
            if fn._tensor_pre_hooks or fn._retains_grad or \
                    isinstance(fn, AccumulateGrad) and fn.variable._backward_hooks:
                inputs = _call_tensor_pre_hooks(fn, inputs)
        if captures is not None and fn in captures:
            for nr, k in captures[fn]:
                captured[k] = inputs[nr] if nr < len(inputs) else None
        if needed is not None and fn not in needed:
            continue
        TLS.node = fn
        if _Anomaly.enabled:
            outs = _call_function_anomaly(fn, inputs)
        elif fn._pre_hooks or fn._post_hooks:
            outs = _call_function(fn, inputs)
        else:
            outs = fn._run(inputs)
        TLS.node = None
        if not keep_graph:
            fn._release_variables()
        n_outs = len(outs)
        # a built-in formula's new tensor is held by nothing else (a custom Function's or a
        # hook's result may be): AccumulateGrad may take it as the .grad, as upstream's
        # use_count test lets it
        if n_outs and fn is not root and not fn._post_hooks and \
                not isinstance(fn, _FunctionBase):
            if n_outs == 1:
                o = outs[0]
                unshared = () if o is None or _is_one_of(o, inputs) else (id(o),)
            else:
                unshared = _unshared(inputs, outs)
        else:
            unshared = ()
        i = -1
        for nxt, nr in fn._next:
            i += 1
            if nxt is None:
                continue
            g = outs[i] if i < n_outs else None
            buf = buffers.get(nxt)
            if buf is None:
                buf = buffers[nxt] = []
            while len(buf) <= nr:
                buf.append(None)
            if g is not None:
                raw = g
                meta = nxt._input_meta
                m = meta[nr] if nr < len(meta) else None
                # validate_outputs' checks pass as they are on a gradient of the expected
                # shape and dtype: only the others take the call
                if m is not None and not (isinstance(g, TensorBase) and g._size == m[0] and
                                          g._dtype == m[1]):
                    g = _validate(fn, i, g, nxt, nr)
                if g is not raw or id(g) in unshared:
                    g._tn_fresh = task_id  # mark_fresh
                old = buf[nr]
                buf[nr] = g if old is None else _accumulate(old, g, create_graph)
            d = deps[nxt] - 1
            deps[nxt] = d
            if d == 0:
                if needed is None or nxt in needed or (captures and nxt in captures):
                    heappush(ready, (_NEG_INF if isinstance(nxt, AccumulateGrad) else -nxt._seq,
                                     counter, nxt))
                    counter += 1
                else:
                    buffers.pop(nxt, None)


def _is_one_of(o, inputs) -> bool:
    for x in inputs:
        if x is o:
            return True
    return False


def _unshared(inputs, outs) -> set:
    """ids of the outputs that appear once among them and are none of the inputs (a built-in
    formula's new tensors, which nothing else holds)."""
    seen, twice = set(), set()
    for o in outs:
        k = id(o)
        if k in seen:
            twice.add(k)
        seen.add(k)
    seen -= twice
    for x in inputs:
        seen.discard(id(x))
    return seen


def _call_function_anomaly(fn, inputs):
    """Anomaly mode: a node returning NaN fails, and a failing node warns with the forward
    traceback that made it (and the nodes whose backward made it), as upstream."""
    try:
        outs = _call_function(fn, inputs)
        if _Anomaly.check_nan:
            _check_nan(fn, outs)
        return outs
    except Exception:
        _print_stack(fn)
        raise


def _print_stack(fn) -> None:
    meta = fn._metadata or {}
    stack = meta.get("traceback_")
    if stack is None:
        torch_warn(f"Error detected in {fn.name()}. No forward pass information available. "
                   "Enable detect anomaly during forward pass for more information.")
        return
    msg = [f"Error detected in {fn.name()}. Traceback of forward call that caused the error:\n"
           + "".join(stack)]
    parent = meta.get("parent_")
    while parent is not None:
        pmeta = parent._metadata or {}
        pstack = pmeta.get("traceback_")
        if pstack is None:
            break
        msg.append(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of "
                   "forward call that induced the previous calculation:\n" + "".join(pstack))
        parent = pmeta.get("parent_")
    torch_warn("".join(msg))


def _check_nan(fn, outs):
    for i, g in enumerate(outs):
        if isinstance(g, TensorBase) and (g._dtype.is_floating_point or g._dtype.is_complex) \
                and bool(g.isnan().any()):
            raise RuntimeError(f"Function '{fn.name()}' returned nan values in its {i}th output.")


def _accumulate(old, new, create_graph):
    """InputBuffer::accumulate: sum the gradients reaching one input."""
    if create_graph:
        return call("add.Tensor", old, new)
    if old._size == new._size and getattr(old, "_tn_buffer_owned", None) and (
            old._st is None or new._st is not old._st):
        # (upstream adds in place only into a buffer nothing else holds: a gradient that is a
        # view of it, as a node handing back its incoming gradient transposed, is not added so)
        call("add_.Tensor", old, new)
        return old
    out = call("add.Tensor", old, new)
    out._tn_buffer_owned = True
    return out


def _validate(fn, i, g, nxt, nr):
    """validate_outputs: the gradient for an input must have its shape (reduced by sum_to
    when it was broadcast) and dtype."""
    meta = nxt._input_meta
    if nr < len(meta) and meta[nr] is not None:
        size, dtype = meta[nr]
        if not isinstance(g, TensorBase):
            raise TypeError(f"Function {fn.name()} returned an invalid gradient at index {i} - "
                            f"expected a Tensor but got {type(g).__name__}")
        if g._size != tuple(size):
            if not _expandable(size, g._size):
                raise RuntimeError(
                    f"Function {fn.name()} returned an invalid gradient at index {i} - got "
                    f"{list(g._size)} but expected shape compatible with {list(size)}")
            g = sum_to(g, size)
        if g._dtype != dtype:
            g = g.to(dtype)
    return g


def _expandable(shape, desired) -> bool:
    ndim, target = len(shape), len(desired)
    if ndim > target:
        return False
    for i in range(ndim):
        s, d = shape[ndim - 1 - i], desired[target - 1 - i]
        if s != d and s != 1:
            return False
    return True


def _call_tensor_pre_hooks(fn, inputs):
    hooks = fn._tensor_pre_hooks
    if isinstance(fn, AccumulateGrad):
        d = fn.variable._backward_hooks
        hooks = [(0, d)] if d else None
    if hooks:
        for nr, d in hooks:
            if d and nr < len(inputs):
                forget_fresh(inputs[nr])  # a hook may keep the gradient it is shown
            for hook in list(d.values()):
                if nr < len(inputs):
                    r = hook(inputs[nr])
                    if r is not None:
                        inputs[nr] = r
    rg = fn._retains_grad
    if rg:
        for nr, ref in rg.items():
            t = ref()
            g = inputs[nr] if nr < len(inputs) else None
            if t is None or g is None:
                continue
            if t._grad is None:
                t._grad = g.clone(memory_format=_contiguous())
            else:
                t._grad = t._grad + g
    return inputs


def _contiguous():
    import torch

    return torch.contiguous_format


def _call_function(fn, inputs):
    if fn._pre_hooks:
        for g in inputs:
            forget_fresh(g)  # a hook may keep the gradients it is shown
        for hook in list(fn._pre_hooks.values()):
            r = hook(tuple(inputs))
            if r is not None:
                inputs = list(r)
    outs = fn._run(inputs)
    if fn._post_hooks:
        for hook in list(fn._post_hooks.values()):
            r = hook(tuple(outs), tuple(inputs))
            if r is not None:
                outs = list(r)
    return outs


def grad_layout_fn():
    return None


def set_anomaly_enabled(enabled: bool, check_nan: bool = True) -> None:
    _Anomaly.enabled, _Anomaly.check_nan = bool(enabled), bool(check_nan)


def is_anomaly_enabled() -> bool:
    return _Anomaly.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return _Anomaly.check_nan


def current_graph_task_id() -> int:
    return TLS.task_id


def has_current_graph_task() -> bool:
    return TLS.task_id != -1


def current_autograd_node():
    return TLS.node


def will_engine_execute_node(node) -> bool:
    if TLS.task_id == -1:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward "
                           "pass")
    fn = node.node if hasattr(node, "output_nr") and hasattr(node, "node") else node
    if TLS.needed is not None:
        return fn in TLS.needed
    return TLS.graph is not None and fn in TLS.graph


class _Group:
    current = None


def get_graph_exec_group():
    """checkpoint's GraphExecGroup: a Python object upstream keeps for the running task."""
    return _Group.current


def set_graph_exec_group(group) -> None:
    _Group.current = group


_A = "torch._C._autograd."
TORCH_C = {
    "torch._C._get_graph_exec_group": get_graph_exec_group,
    "torch._C._set_graph_exec_group": set_graph_exec_group,
    "torch._C._ImperativeEngine": ImperativeEngine,
    "torch._C.set_anomaly_enabled": set_anomaly_enabled,
    "torch._C.is_anomaly_enabled": is_anomaly_enabled,
    "torch._C.is_anomaly_check_nan_enabled": is_anomaly_check_nan_enabled,
    "torch._C._current_graph_task_id": current_graph_task_id,
    "torch._C._will_engine_execute_node": will_engine_execute_node,
    _A + "_get_current_graph_task_id": current_graph_task_id,
    _A + "_has_current_graph_task": has_current_graph_task,
    _A + "_current_autograd_node": current_autograd_node,
    _A + "_will_engine_execute_node": will_engine_execute_node,
}
