"""torch._C._FunctionBase: the node behind a custom torch.autograd.Function (upstream's
python_function.cpp, PyNode).

``Function.apply`` (upstream Python) calls ``_FunctionBase.apply``: it makes the context (an
instance of the Function's generated ``...Backward`` class, which is the graph node), runs
``forward`` with grad mode off, then wraps the outputs: marks dirty inputs (rebasing their
history), non-differentiable outputs, inputs returned as outputs (a fresh alias) and saves
``ctx.to_save``. The engine runs the node by calling the class's ``apply`` (the user's
``backward``) and maps its results back onto the tensor inputs.
"""

from __future__ import annotations

from ..core.tensor import TensorBase
from ..core.grad_mode import TLS as _GRAD
from .node import Node, SavedVariable, _SAVED_FREED, gradient_edge


class _FunctionBase(Node):
    def __new__(cls, *args, **kwargs):
        self = object.__new__(cls)
        Node.__init__(self)
        self.to_save = None
        self.non_differentiable = None
        self.dirty_tensors = None
        self.saved_for_forward = None
        self.materialize_grads = True
        self._materialize_non_diff_grads = True
        self.needs_input_grad = ()
        self._saved = None
        self._released = False
        self._input_is_tensor = ()
        self._output_info = ()
        self._is_pure_view = False
        self._compiled_autograd_backward_state = None
        return self

    def __init__(self, *args, **kwargs):
        pass

    # a custom Function's node is a Python class upstream: object's repr, module and all
    __repr__ = object.__repr__

    # --- saved tensors -----------------------------------------------------------------------
    @property
    def saved_tensors(self):
        if self.saved_for_forward is not None:
            return self.saved_for_forward  # only while jvp runs: apply clears it afterwards
        if self._released:
            raise RuntimeError(_SAVED_FREED)
        if self._saved is None:
            return ()
        return tuple(s.unpack(self) if s is not None else None for s in self._saved)

    saved_variables = saved_tensors

    @property
    def _raw_saved_tensors(self):
        if self._released:
            raise RuntimeError(_SAVED_FREED)
        return tuple(self._saved or ())

    def _release_variables(self) -> None:
        if self._saved:
            for s in self._saved:
                if s is not None:
                    s.release()
            self._released = True

    def maybe_clear_saved_tensors(self) -> None:
        self._release_variables()

    def _get_compiled_autograd_symints(self):
        return []

    # --- forward ---------------------------------------------------------------------------
    @classmethod
    def apply(cls, *args):
        from torch.autograd.function import _SingleLevelFunction

        backward_cls = getattr(cls, "_backward_cls", None)
        if backward_cls is None:
            raise RuntimeError("apply is only available on Function subclasses")
        ctx = backward_cls()
        is_tensor = tuple(isinstance(a, TensorBase) for a in args)
        executable = _GRAD.grad_enabled and any(
            t and (a._requires_grad or a._grad_fn is not None) for t, a in zip(is_tensor, args))
        ctx._input_is_tensor = is_tensor
        ctx.needs_input_grad = tuple(
            bool(t and executable and (a._requires_grad or a._grad_fn is not None))
            for t, a in zip(is_tensor, args))
        if executable:
            ctx._next = [gradient_edge(a) for t, a in zip(is_tensor, args) if t]
        prev, prev_fw = _GRAD.grad_enabled, _GRAD.fw_grad
        _GRAD.grad_enabled = _GRAD.fw_grad = False  # forward AD is off in forward too, as upstream
        try:
            if cls.setup_context is not _SingleLevelFunction.setup_context:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        finally:
            _GRAD.grad_enabled, _GRAD.fw_grad = prev, prev_fw
        dirty = {id(t) for t in (ctx.dirty_tensors or ())}
        wrapped = _wrap_outputs(ctx, args, output, executable)
        from .forward import levels as _fw_levels

        try:
            if _fw_levels.active():
                from .forward.custom_function import forward_mode

                forward_mode(ctx, args, wrapped, dirty)
        finally:
            ctx.saved_for_forward = None
        return wrapped

    # --- backward (called by the engine) ---------------------------------------------------
    def _run(self, grads):
        import torch

        info = self._output_info
        if self.materialize_grads:
            grads = [torch.zeros(m[0], dtype=m[1]) if g is None and m is not None and
                     (m[2] or self._materialize_non_diff_grads) else g
                     for g, m in zip(grads, info)] + list(grads[len(info):])
        result = self.apply(*grads)
        if not isinstance(result, tuple):
            result = (result,)
        n_in = len(self._input_is_tensor)
        if len(result) != n_in:
            if len(result) > n_in and all(r is None for r in result[n_in:]):
                result = result[:n_in]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                                   f"gradients (expected {n_in}, got {len(result)})")
        out = []
        for i, (is_t, r) in enumerate(zip(self._input_is_tensor, result)):
            if is_t:
                out.append(r)
            elif r is not None:
                raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                   f"None at position {i + 1}, but the corresponding forward "
                                   "input was not a Variable")
        return out

    def __call__(self, *grads):
        return self._run(list(grads))

    def _register_hook_dict(self, tensor) -> None:
        Node._register_hook_dict(self, tensor)


def _wrap_outputs(ctx, args, output, executable):
    """_process_backward_mode_ad (custom_function.cpp): attach the outputs to the node."""
    from ..core.construct import alias
    from .views import IN_CUSTOM_FUNCTION, rebase_history, requires_grad, set_creation

    single = not isinstance(output, tuple)
    outputs = (output,) if single else output
    inputs = {id(a) for a in args if isinstance(a, TensorBase)}
    dirty = {id(t) for t in (ctx.dirty_tensors or ())}
    nondiff = {id(t) for t in (ctx.non_differentiable or ())}
    n_tensors = sum(isinstance(o, TensorBase) for o in outputs)
    wrapped = []
    info = []
    for i, o in enumerate(outputs):
        if not isinstance(o, TensorBase):
            wrapped.append(o)
            info.append(None)
            continue
        is_input = id(o) in inputs
        is_modified = id(o) in dirty
        diff = executable and id(o) not in nondiff and (
            o._dtype.is_floating_point or o._dtype.is_complex)
        info.append((o._size, o._dtype, diff))
        if not diff:
            if not requires_grad(o):
                if is_input and not is_modified:
                    o = _view_as_self(o)
            elif is_input:
                o = alias(o)  # detach()
            elif o._view_base is None:
                o._grad_fn = None  # detach_()
                o._requires_grad = False
        elif is_modified:
            if o._grad_fn is None and o._requires_grad:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            if o._view_base is not None and n_tensors > 1:
                raise RuntimeError(
                    "If your Function modifies inplace an input that is a view of another "
                    "Tensor, your Function cannot return more than one Tensor. This is not "
                    "supported by the current autograd engine. You should either make sure the "
                    "input is not a view (using .clone() for example) or make your Function only "
                    "return one Tensor (potentially splitting it into two Functions: one doing "
                    "the inplace that returns a single Tensor and a second one that does the "
                    "other operations). You can ask on the forum https://discuss.pytorch.org/ if "
                    "you need help to do this change.")
            o._grad = None
            rebase_history(o, ctx)
            if o._view_base is None:
                o._output_nr = i
        else:
            if is_input:
                o = _view_as_self(o)
            o._grad_fn = ctx
            o._output_nr = i
            o._requires_grad = True
            if o._view_base is not None:
                meta = o._tn_view
                if meta is not None:
                    meta[0] = o._version_ref[0]  # set_gradient_edge: its history is current
        if o._view_base is not None and not (is_input and is_modified):
            set_creation(o, IN_CUSTOM_FUNCTION)
        wrapped.append(o)
    ctx._output_info = tuple(info)
    ctx._input_meta = tuple((m[0], m[1]) if m is not None else None for m in info)
    if executable and ctx.to_save is not None:
        outs = {id(o) for o in wrapped if isinstance(o, TensorBase)}
        saved = []
        for k, t in enumerate(ctx.to_save):
            if t is None:
                saved.append(None)
            elif not isinstance(t, TensorBase):
                raise TypeError(f"save_for_backward can only save variables, but argument {k} "
                                f"is of type {type(t).__name__}")
            else:
                saved.append(SavedVariable(t, id(t) in outs and t._grad_fn is ctx))
        ctx._saved = saved
    elif not executable:
        ctx._saved = None
    # as upstream, the context keeps SavedVariables only (holding the outputs themselves
    # would make a reference cycle output -> node -> output)
    ctx.to_save = ctx.dirty_tensors = ctx.non_differentiable = None
    return wrapped[0] if single else tuple(wrapped)


def _view_as_self(t):
    """_view_as_self_with_no_grad: an input returned as-is comes back as a view of it."""
    from ..core.construct import alias

    out = alias(t)
    out._view_base = t._view_base if t._view_base is not None else t
    out._tn_view = [t._version_ref[0], 0]
    return out


TORCH_C = {"torch._C._FunctionBase": _FunctionBase}
