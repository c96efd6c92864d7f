"""Graph nodes (upstream's torch::autograd::Node) and saved variables.

A node receives one gradient per differentiable output of the forward call that made it and
returns one gradient per next edge (``next_functions``: (node, input_nr) of each differentiable
input, (None, 0) where the input did not require grad). Nodes carry upstream's per-node hooks:
tensor pre-hooks (Tensor.register_hook), retains-grad hooks, pre-hooks and post-hooks.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import OrderedDict

from ..core.grad_mode import TLS as _GRAD
from ..core.tensor import TensorBase, alias as _alias
from ..dispatch import python_dispatch as _python_dispatch
from .accumulate import accumulate_grad
from .graph_task import TLS as _TASK
from .hooks import default_hooks

UINT64_MAX = 18446744073709551615


class _Anomaly:
    """torch.autograd.set_detect_anomaly: nodes remember the forward stack that made them."""

    enabled = False
    check_nan = True


ANOMALY = _Anomaly()


def _store_stack(node) -> None:
    """AnomalyMetadata::store_stack and assign_parent: the forward traceback that made the node,
    and, for a node made while backward ran (double backward), the node that was running."""
    import traceback

    meta = node.metadata
    # the Python stack as upstream's C++ sees it: without the frames of torch._C itself
    frames = [f for f in traceback.extract_stack()[:-2] if not f.filename.startswith(_OWN)]
    meta["traceback_"] = traceback.format_list(frames)
    parent = _TASK.node
    if parent is not None:
        meta["parent_"] = parent


_OWN = __file__.rsplit("/csrc/", 1)[0] + "/"  # the torchnative package


def _views_not_loaded(t):
    raise RuntimeError("torchnative.csrc.autograd.views is not loaded: a view's grad_fn needs it")


# A view's grad_fn, refreshed when its base was modified in place: views.py, which builds on
# these nodes, installs it when imported (register_view_grad_fn).
_grad_fn_of = _views_not_loaded


def register_view_grad_fn(grad_fn_of) -> None:
    global _grad_fn_of
    _grad_fn_of = grad_fn_of


class _Seq(threading.local):
    def __init__(self):
        self.next = 0


_SEQ = _Seq()


def next_sequence_nr() -> int:
    n = _SEQ.next
    _SEQ.next = n + 1
    return n


def peek_sequence_nr() -> int:
    """The number the next node of this thread will take (fx reads it to tag traced nodes)."""
    return _SEQ.next


class Node:
    """Base of every graph node. Subclasses implement ``apply(grads: list) -> list``."""

    _is_graph_node = True

    def __init__(self, next_edges=(), sequence_nr: int | None = None):
        self._next = list(next_edges)
        self._seq = next_sequence_nr() if sequence_nr is None else sequence_nr
        self._pre_hooks = None  # OrderedDict id -> fn(grad_outputs)
        self._post_hooks = None  # OrderedDict id -> fn(grad_inputs, grad_outputs)
        self._tensor_pre_hooks = None  # list of (input_nr, hooks dict)
        self._retains_grad = None  # input_nr -> weakref to the tensor
        self._metadata = None
        self._input_meta = ()  # (size, dtype) per input (the forward's differentiable outputs)
        if ANOMALY.enabled:
            _store_stack(self)

    # --- what upstream exposes --------------------------------------------------------------
    def name(self) -> str:
        return type(self).__name__

    @property
    def next_functions(self):
        return tuple(self._next)

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    @property
    def requires_grad(self) -> bool:
        return True

    def _sequence_nr(self) -> int:
        return self._seq

    def _set_sequence_nr(self, n: int) -> None:
        self._seq = n

    @property
    def _input_metadata(self):
        return tuple(_InputMetadata(s, d) for s, d in self._input_meta)

    def register_hook(self, fn):
        from torch.utils.hooks import RemovableHandle

        if self._post_hooks is None:
            self._post_hooks = OrderedDict()
        handle = RemovableHandle(self._post_hooks)
        self._post_hooks[handle.id] = fn
        return handle

    def register_prehook(self, fn):
        from torch.utils.hooks import RemovableHandle

        if self._pre_hooks is None:
            self._pre_hooks = OrderedDict()
        handle = RemovableHandle(self._pre_hooks)
        self._pre_hooks[handle.id] = fn
        return handle

    def _register_hook_dict(self, tensor) -> None:
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = []
        self._tensor_pre_hooks.append((tensor._output_nr, tensor._backward_hooks))

    def _add_retains_grad(self, tensor) -> None:
        if self._retains_grad is None:
            self._retains_grad = {}
        self._retains_grad[tensor._output_nr] = weakref.ref(tensor)

    def __call__(self, *grads):
        out = self._run(list(grads))
        return tuple(out) if len(out) != 1 else out[0]

    def _release_variables(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"

    def __dir__(self):
        """As upstream's generated node classes: the saved values are attributes
        (``_saved_<name>``, and ``_raw_saved_<name>`` for tensors)."""
        names = set(object.__dir__(self))
        saved = self.__dict__.get("_saved")
        spec = self.__dict__.get("_spec") or getattr(type(self), "_spec", None)
        if isinstance(saved, dict):
            # our own bookkeeping is not part of upstream's generated classes
            names -= {k for k in self.__dict__ if k.startswith("_")}
            keys = list(saved)
            if spec is not None:
                keys += [n for n, *_ in spec.saved_inputs] + [n for n, *_ in spec.saved_outputs]
            for k in keys:
                v = saved.get(k)
                if not _exposed(v):
                    continue
                names.add(f"_saved_{k}")
                if isinstance(v, SavedVariable) or type(v) is list and v and \
                        any(isinstance(x, SavedVariable) for x in v):
                    names.add(f"_raw_saved_{k}")
        return sorted(names)


def _exposed(v) -> bool:
    """Upstream's generated nodes expose saved tensors, numbers, strings, int lists and scalars,
    not saved dtypes or lists of sizes."""
    from ..core.dtypes import dtype

    if isinstance(v, dtype):
        return False
    if type(v) in (list, tuple) and any(isinstance(x, (dtype, list, tuple)) for x in v):
        return False
    return True


class _InputMetadata:
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype

    @property
    def device(self):
        from ..core.device import CPU

        return CPU


class AccumulateGrad(Node):
    """The sink for a leaf tensor: accumulates into ``variable.grad``."""

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"

    def __init__(self, variable):
        super().__init__((), UINT64_MAX)
        self.variable = variable
        self._input_meta = ((variable._size, variable._dtype),)

    def _run(self, grads):
        accumulate_grad(self.variable, grads[0])
        return []


def grad_accumulator(t: TensorBase) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, shared while anything holds it (upstream keeps a weak
    pointer on the tensor too)."""
    ref = getattr(t, "_tn_grad_acc", None)
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t._tn_grad_acc = weakref.ref(acc)
    return acc


def gradient_edge(t: TensorBase):
    """(node, input_nr) where t's gradient flows; (None, 0) when t does not require grad."""
    fn = t._grad_fn if t._view_base is None else _grad_fn_of(t)
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (grad_accumulator(t), 0)
    return (None, 0)


class GraphRoot(Node):
    def name(self) -> str:
        return "torch::autograd::GraphRoot"

    def __init__(self, edges, grads):
        super().__init__(edges, UINT64_MAX)
        self._grads = grads

    def _run(self, grads):
        return list(self._grads)


class Error(Node):
    """A node that fails when the backward pass reaches it (derivative not implemented)."""

    def name(self) -> str:
        return "torch::autograd::Error"

    def __init__(self, msg: str, next_edges=()):
        super().__init__(next_edges)
        self._msg = msg

    def _run(self, grads):
        raise RuntimeError(self._msg)


class NotImplementedNode(Error):
    def name(self) -> str:
        return "torch::autograd::NotImplemented"


# the class as Python sees upstream's (type(grad_fn).__name__ is "NotImplemented")
NotImplementedNode.__name__ = NotImplementedNode.__qualname__ = "NotImplemented"
NotImplementedNode.__module__ = "builtins"


class DelayedError(Node):
    """torch._C._functions.DelayedError: an identity that fails only when differentiated."""

    def __init__(self, msg, num_inputs: int):
        super().__init__()
        self._msg = msg.decode() if isinstance(msg, bytes) else str(msg)
        self._n = num_inputs

    def __call__(self, *inputs):
        return wrap_outputs_with(self, inputs, lambda: Error(self._msg))

    def _run(self, grads):
        raise RuntimeError(self._msg)


class UndefinedGrad(Node):
    def __call__(self, *inputs):
        return wrap_outputs_with(self, inputs, lambda: _UndefinedGradBackward())

    def _run(self, grads):
        return [None for _ in grads]


class _UndefinedGradBackward(Node):
    def _run(self, grads):
        return [None] * len(self._next)


def wrap_outputs_with(holder, inputs, make_node):
    """DelayedError / UndefinedGrad: aliases of the inputs whose grad_fn is ``make_node()``."""
    from ..core.construct import alias

    if not _GRAD.grad_enabled or not any(
            isinstance(t, TensorBase) and (t._requires_grad or t._grad_fn is not None)
            for t in inputs):
        return inputs[0] if len(inputs) == 1 else tuple(inputs)
    node = make_node()
    node._next = [gradient_edge(t) if isinstance(t, TensorBase) else (None, 0) for t in inputs]
    outs, meta = [], []
    for i, t in enumerate(inputs):
        if t is None:
            outs.append(None)
            meta.append(None)
            continue
        a = alias(t)
        a._grad_fn = node
        a._output_nr = i
        a._requires_grad = True
        outs.append(a)
        meta.append((t._size, t._dtype))
    node._input_meta = tuple(meta)
    return outs[0] if len(outs) == 1 else tuple(outs)


_STRIP = re.compile(r"Backward\d*$|^torch::autograd::")


def forward_name(node) -> str:
    return _STRIP.sub("", node.name())


_SAVED_FREED = ("Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or if "
                "you need to access saved tensors after calling backward.")


class SavedVariable:
    """A tensor saved for backward (upstream's SavedVariable, saved_variable.cpp): the version it
    had and what it needs to be handed back with its history.

    An input (or a leaf) is kept as the tensor itself. An output of the node that saves it is
    kept as an alias sharing its version counter (the output itself would make a cycle
    node -> tensor -> node) and is handed back re-attached to that node. With saved-tensor
    hooks in force, ``pack`` runs now (grad mode off) and ``unpack`` on every use; the version
    is then not checked, as upstream."""

    __slots__ = ("data", "version", "is_output", "grad_fn", "output_nr", "requires_grad",
                 "was_leaf", "hooks", "packed", "saved_original", "grad_acc", "freed",
                 "__weakref__")

    def __init__(self, t: TensorBase, is_output: bool):
        if t._tn_inference:
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors "
                "created in inference mode in computation tracked by autograd. To work around "
                "this, you can make a clone to get a normal tensor and use it in autograd, or "
                "use `torch.no_grad()` instead of `torch.inference_mode()`.")
        self.version = t._version_ref[0]
        self.is_output = is_output
        self.output_nr = t._output_nr
        self.requires_grad = False
        self.was_leaf = t._grad_fn is None
        self.grad_fn = None
        self.grad_acc = None
        self.hooks = None
        self.packed = None
        self.saved_original = False
        self.freed = False
        self.data = None
        hooks = default_hooks()
        if hooks is not None and not t._wrapped:  # wrapped numbers never reach the hooks
            self._save_metadata(t)
            self._pack(hooks, t)
            return
        if not is_output or self.was_leaf:
            self.saved_original = True
            self.data = t
            return
        self._save_metadata(t)
        self.data = shallow_copy_and_detach(t)

    def _save_metadata(self, t) -> None:
        self.output_nr = t._output_nr
        if self.was_leaf:
            self.requires_grad = bool(t._requires_grad)
            if t._requires_grad:
                self.grad_acc = grad_accumulator(t)
        elif not self.is_output:
            self.grad_fn = t._grad_fn if t._view_base is None else _grad_fn_of(t)

    def _pack(self, hooks, t) -> None:
        from ..core.grad_mode import TLS

        pack, unpack = hooks
        version = t._version_ref[0]
        prev = TLS.grad_enabled
        TLS.grad_enabled = False
        try:
            if self.saved_original:
                from ..core.construct import alias

                t = alias(t, _detached_class(t))
            self.packed = pack(t)
        finally:
            TLS.grad_enabled = prev
        self.hooks = unpack
        if t._version_ref[0] != version:
            raise RuntimeError(
                "A saved tensor pack hook is modifying its input in place. Tensors provided as "
                "input to pack hook cannot be modified by in-place operations as this can lead "
                "to unexpected side-effects. Please open an issue if you need to perform "
                "in-place operations on the input to a pack hook.")

    def unpack(self, node=None):
        data = self.data
        hooks = self.hooks
        if data is None and hooks is None:
            raise RuntimeError(_SAVED_FREED)
        if hooks is None:
            if self.saved_original:
                grad_fn = data._grad_fn if data._view_base is None else _grad_fn_of(data)
            else:
                grad_fn = None
        else:
            grad_fn = self.grad_fn
        if not self.was_leaf and grad_fn is None:
            if node is None:
                raise RuntimeError("Trying to use a saved tensor that has been detached in-place, "
                                   "i.e. with .detach_().This is not supported, please use "
                                   "out-of-place `.detach()` instead")
            grad_fn = node
        if hooks is None:
            current = data._version_ref[0]
            if current != self.version:
                where = ""
                if grad_fn is not None:
                    where = f", which is output {self.output_nr} of {forward_name(grad_fn)},"
                if ANOMALY.enabled:
                    hint = (" Hint: the backtrace further above shows the operation that failed "
                            "to compute its gradient. The variable in question was changed in "
                            "there or anywhere later. Good luck!")
                else:
                    hint = (" Hint: enable anomaly detection to find the operation that failed "
                            "to compute its gradient, with torch.autograd.set_detect_anomaly("
                            "True, check_nan=False).")
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by "
                    f"an inplace operation: [{_type_string(data)} {list(data._size)}]{where} is "
                    f"at version {current}; expected version {self.version} instead.{hint}")
            if self.saved_original:
                return data
        else:
            data = hooks(self.packed)
            if not isinstance(data, TensorBase):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                                f"got result of type {type(data).__name__}")
        if grad_fn is None and not self.requires_grad and not _requires_grad(data):
            return data
        if hooks is None and not _GRAD.grad_enabled and not _python_detaches(data):
            return data  # nothing can record on it: its history would go unread
        out = shallow_copy_and_detach(data)
        if hasattr(data, "_tn_fw"):  # a forward-AD tangent, as upstream's saved fw_grad_
            from .forward.levels import share_tangent

            share_tangent(data, out)
        if grad_fn is not None:
            out._grad_fn = grad_fn
            out._output_nr = self.output_nr
            out._requires_grad = True
        else:
            out._requires_grad = self.requires_grad
            if self.grad_acc is not None:
                out._tn_grad_acc = weakref.ref(self.grad_acc)
        return out

    def release(self) -> None:
        """reset_data: the graph is freed."""
        self.data = None
        self.hooks = None
        self.packed = None
        self.grad_fn = None
        self.freed = True

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """SavedTensor.register_hooks: pack now, unpack on use (the ``_raw_saved_*`` API)."""
        if self.hooks is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                               "been set. Hint: only one pair of hooks is allowed at a time.")
        if self.data is None:
            raise RuntimeError(
                "Calling register_hooks on a saved tensor after it has been freed. Saved "
                "intermediate values of the graph are freed when you call .backward() or "
                "autograd.grad(). Specify retain_graph=True if you need to backward through the "
                "graph a second time or if you need to access saved variables after calling "
                "backward.")
        for fn, what in ((pack_hook, "pack_hook"), (unpack_hook, "unpack_hook")):
            if not callable(fn):
                raise TypeError(f"Expected {what} to be callable")
        data = self.data
        if self.saved_original:
            self._save_metadata(data)
        self._pack((pack_hook, unpack_hook), data)
        self.data = None

    def __repr__(self) -> str:
        return f"<torch._C._autograd.SavedTensor object at {hex(id(self))}>"


SavedVariable.__name__ = SavedVariable.__qualname__ = "SavedTensor"
SavedVariable.__module__ = "torch._C._autograd"


def _python_detaches(t) -> bool:
    return _python_dispatch.wants_python_dispatch((t,), {})


def shallow_copy_and_detach(t: TensorBase) -> TensorBase:
    """TensorImpl::shallow_copy_and_detach, sharing ``t``'s version counter: under a dispatch
    mode, or for a tensor subclass, upstream asks Python for ``aten::detach`` (so a trace records
    the detach that saving an output and unpacking it make); otherwise a plain alias."""
    if not _python_detaches(t):
        return _alias(t)
    from ..dispatch.call import op
    from ..dispatch.python_dispatch import dispatch

    out = dispatch(op("detach"), (t,), {})
    out._version_ref = t._version_ref
    return out


def _requires_grad(t) -> bool:
    if t._requires_grad or t._grad_fn is not None:
        return True
    b = t._view_base
    return b is not None and (b._requires_grad or b._grad_fn is not None)


def _detached_class(t):
    from ..core.tensor import _detached_class as f

    return f(t)


def make_saved_tensor(tensor, is_output: bool, is_inplace_on_view: bool = False):
    return SavedVariable(tensor, is_output)


_FREED = object()


def _type_string(t) -> str:
    from ..core.tensor import legacy_type_name

    return legacy_type_name(t._dtype)


TORCH_C_FUNCTIONS = {"AccumulateGrad": AccumulateGrad, "DelayedError": DelayedError,
                     "UndefinedGrad": UndefinedGrad, "GraphRoot": GraphRoot, "Error": Error}

TORCH_C = {f"torch._C._functions.{k}": v for k, v in TORCH_C_FUNCTIONS.items()}
TORCH_C["torch._C._autograd.SavedTensor"] = SavedVariable
TORCH_C["torch._C._autograd._make_saved_tensor"] = make_saved_tensor
TORCH_C["torch._C._autograd._get_sequence_nr"] = peek_sequence_nr
