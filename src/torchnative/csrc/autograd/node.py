"""Graph nodes (upstream's torch::autograd::Node) and saved variables.

A node receives one gradient per differentiable output of the forward call that made it and
returns one gradient per next edge (``next_functions``: (node, input_nr) of each differentiable
input, (None, 0) where the input did not require grad). Nodes carry upstream's per-node hooks:
tensor pre-hooks (Tensor.register_hook), retains-grad hooks, pre-hooks and post-hooks.
"""

from __future__ import annotations

import itertools
import re
import threading
import weakref
from collections import OrderedDict

from ..tensor import TensorBase

UINT64_MAX = 18446744073709551615


class _Seq(threading.local):
    def __init__(self):
        self.counter = itertools.count()


_SEQ = _Seq()


def next_sequence_nr() -> int:
    return next(_SEQ.counter)


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

    def release_variables(self) -> None:
        pass

    def should_compute_output(self, i: int) -> bool:
        return self._next[i][0] is not None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} object at {hex(id(self))}>"


class _InputMetadata:
    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape, self.dtype = shape, dtype

    @property
    def device(self):
        from ..device import CPU

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
        from .engine import accumulate_grad

        accumulate_grad(self.variable, grads[0])
        return []


def grad_accumulator(t: TensorBase) -> AccumulateGrad:
    """The leaf's AccumulateGrad node, shared while anything holds it (upstream keeps a weak
    pointer on the tensor too)."""
    ref = t.__dict__.get("_tn_grad_acc")
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t.__dict__["_tn_grad_acc"] = weakref.ref(acc)
    return acc


def gradient_edge(t: TensorBase):
    """(node, input_nr) where t's gradient flows; (None, 0) when t does not require grad."""
    fn = t._grad_fn
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


class DelayedError(Node):
    """torch._C._functions.DelayedError: an identity that fails only when differentiated."""

    def __init__(self, msg, num_inputs: int):
        super().__init__()
        self._msg = msg.decode() if isinstance(msg, bytes) else str(msg)
        self._n = num_inputs

    def __call__(self, *inputs):
        from .function import wrap_outputs_with

        return wrap_outputs_with(self, inputs, lambda: Error(self._msg))

    def _run(self, grads):
        raise RuntimeError(self._msg)


class UndefinedGrad(Node):
    def __call__(self, *inputs):
        from .function import wrap_outputs_with

        return wrap_outputs_with(self, inputs, lambda: _UndefinedGradBackward())

    def _run(self, grads):
        return [None for _ in grads]


class _UndefinedGradBackward(Node):
    def _run(self, grads):
        return [None] * len(self._next)


_STRIP = re.compile(r"Backward\d*$|^torch::autograd::")


def forward_name(node) -> str:
    return _STRIP.sub("", node.name())


_SAVED_FREED = ("Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or if "
                "you need to access saved tensors after calling backward.")


class SavedVariable:
    """A tensor saved for backward: the version it had, and the edge it had.

    An output of the node that saves it is kept as a detached alias (a strong reference to the
    output itself would be a cycle node -> tensor -> node) and re-attached to the node when
    unpacked with grad mode on (double backward)."""

    __slots__ = ("data", "version", "is_output", "grad_fn", "output_nr", "requires_grad",
                 "was_leaf", "hooks", "packed")

    def __init__(self, t: TensorBase, is_output: bool):
        from .hooks import saved_tensor_hooks

        if t.__dict__.get("_tn_inference"):
            raise RuntimeError(
                "Inference tensors cannot be saved for backward. Please do not use Tensors "
                "created in inference mode in computation tracked by autograd. To work around "
                "this, you can make a clone to get a normal tensor and use it in autograd, or "
                "use `torch.no_grad()` instead of `torch.inference_mode()`.")
        self.version = t._version_ref[0]
        self.is_output = is_output
        self.output_nr = t._output_nr
        self.requires_grad = t._requires_grad
        self.was_leaf = t._grad_fn is None
        hooks = saved_tensor_hooks()
        self.hooks = None
        self.packed = None
        if is_output:
            from ..construct import alias

            self.data = alias(t)
            self.grad_fn = None
        else:
            self.data = t
            self.grad_fn = t._grad_fn
        if hooks is not None:
            pack, unpack = hooks
            self.hooks = unpack
            self.packed = pack(self.data if not is_output else t)
            self.data = None
            self.version = None

    def unpack(self, node=None):
        if self.hooks is not None:
            if self.packed is _FREED:
                raise RuntimeError(_SAVED_FREED)
            t = self.hooks(self.packed)
            if not isinstance(t, TensorBase):
                raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but "
                                f"got result of type {type(t).__name__}")
            return t
        data = self.data
        if data is None:
            raise RuntimeError(_SAVED_FREED)
        grad_fn = node if self.is_output else self.grad_fn
        if data._version_ref[0] != self.version:
            if not self.is_output:
                grad_fn = data._grad_fn  # upstream names the tensor's current history
            where = ""
            if grad_fn is not None:
                where = f", which is output {self.output_nr} of {forward_name(grad_fn)},"
            raise RuntimeError(
                "one of the variables needed for gradient computation has been modified by an "
                f"inplace operation: [{_type_string(data)} {list(data._size)}]{where} is at "
                f"version {data._version_ref[0]}; expected version {self.version} instead. Hint: "
                "enable anomaly detection to find the operation that failed to compute its "
                "gradient, with torch.autograd.set_detect_anomaly(True, check_nan=False).")
        from .grad_mode import TLS

        if not self.is_output:
            if data._grad_fn is self.grad_fn:
                return data
        elif not TLS.grad_enabled or not self.requires_grad:
            return data
        from ..construct import alias

        out = alias(data)
        out._grad_fn = grad_fn
        out._output_nr = self.output_nr
        out._requires_grad = self.requires_grad
        return out

    def release(self) -> None:
        self.data = None
        if self.hooks is not None:
            self.packed = _FREED

    def register_hooks(self, pack_hook, unpack_hook) -> None:
        """SavedTensor.register_hooks: pack now, unpack on use (the ``_raw_saved_*`` API)."""
        if self.hooks is not None:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already "
                               "been set. Hint: only one pair of hooks is allowed at a time.")
        if self.data is None:
            raise RuntimeError(_SAVED_FREED)
        self.packed = pack_hook(self.data)
        self.hooks = unpack_hook
        self.data = None


def make_saved_tensor(tensor, is_output: bool, is_inplace_on_view: bool = False):
    return SavedVariable(tensor, is_output)


_FREED = object()


def _type_string(t) -> str:
    from ..tensor import _LEGACY_TENSOR

    return f"torch.{_LEGACY_TENSOR.get(t._dtype._name, t._dtype._name)}"


TORCH_C_FUNCTIONS = {"AccumulateGrad": AccumulateGrad, "DelayedError": DelayedError,
                     "UndefinedGrad": UndefinedGrad, "GraphRoot": GraphRoot, "Error": Error}

TORCH_C = {f"torch._C._functions.{k}": v for k, v in TORCH_C_FUNCTIONS.items()}
TORCH_C["torch._C._autograd.SavedTensor"] = SavedVariable
TORCH_C["torch._C._autograd._make_saved_tensor"] = make_saved_tensor
