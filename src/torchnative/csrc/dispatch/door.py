"""The one door: every operator call, whatever its spelling, reaches a kernel through here.

``aten_dispatch(op, args, kwargs)`` runs, in order, as upstream's dispatch keys do: a
CompositeImplicitAutograd operator as the operators it is made of; autograd (when grad mode is on
and an input requires grad: csrc/autograd/dispatch.py records the graph around the call below);
Python dispatch (``__torch_dispatch__`` modes and subclasses); the kernel for the backend of the
arguments (cpu or meta). The kernel is
resolved once per operator and backend, and is the first of:

1. a Python kernel registered for that key through ``torch.library`` (upstream's meta functions,
   user custom ops);
2. torchnative's own kernel (``csrc/kernels``);
3. for an in-place or ``out=`` overload, its functional sibling's kernel, writing into the
   destination as upstream's structured kernels do;
4. a composite Python kernel (CompositeExplicitAutograd, then CompositeImplicitAutograd);
5. upstream's Python decomposition (``torch._decomp``);

and failing all, a refusal naming the overload. ``served`` counts which path served each call.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping
from typing import Any, Callable

from ..core.conj_neg_bits import LIVE as _BITS_LIVE, has_bits as _has_bits
from ..core.dtypes import BIT_STORED as _BIT_STORED
from ..core.construct import make
from ..core.grad_mode import TLS as _GRAD
from . import autocast as _autocast
from . import bit_stored_ops as _bit_stored_ops
from . import math_bits as _math_bits
from . import python_dispatch as _python_dispatch
from . import python_dispatcher as _python_dispatcher
from .boxing import normalized
from ..ops.dispatch_keys import autograd_excluded
from ..ops.dispatcher import REGISTRY, OperatorHandle, packet_overloads, register_door
from ..core.refuse import TorchnativeNotImplementedError
from ..platform.float_state import QUIET_RESET as _QUIET_RESET, QUIET_SET as _QUIET_SET, \
    QUIET_STATE as _QUIET_STATE
from ..core.tensor import TensorBase, numel_of
from ..core.torch_function import (_has_attr_override, overridable_arguments,
                                   wants_torch_function)

class Impl:
    """A resolved implementation: the function, which path it is (for ``served``), the
    arguments it mutates (their versions are bumped), how many calls it served, and whether it
    is our own code, run in the quiet float state (Python kernels registered by users or
    upstream see numpy's state as the caller left it)."""

    __slots__ = ("fn", "path", "mutated", "fast", "name", "count", "quiet", "grad", "factory")

    def __init__(self, fn: Callable, path: str, mutated: tuple, fast: Callable | None = None,
                 name: str = ""):
        self.fn, self.path, self.mutated, self.fast, self.name = fn, path, mutated, fast, name
        self.count = 0
        self.quiet = path in _OWN_PATHS
        # as the door's plain kernel: whether autograd could record the call (False: its
        # outputs are never differentiable), and whether its backend comes from its ``device``
        # and ``dtype`` keywords (a factory)
        self.grad = True
        self.factory = False
        _IMPLS.append(self)


# the paths whose functions are ours (csrc/kernels): C++ kernels raise no warning for a float
# exception, so these compute with numpy's float exceptions ignored (platform/float_state.py)
_OWN_PATHS = frozenset(("kernel", "fast", "composite", "structured"))


def call(impl: Impl, args: tuple, kwargs: dict) -> Any:
    """``impl.fn(*args, **kwargs)``, in the quiet float state where the function is ours."""
    if not impl.quiet:
        return impl.fn(*args, **kwargs)
    token = _QUIET_SET(_QUIET_STATE)
    try:
        return impl.fn(*args, **kwargs)
    finally:
        _QUIET_RESET(token)


_IMPLS: list[Impl] = []


class _Served(Mapping):
    """(overload name, path) -> calls served, read by the agreement report and the coverage
    census. Each Impl counts its own calls (a counter bump is all the hot path pays); this view
    sums them."""

    def _snapshot(self) -> Counter:
        c: Counter = Counter()
        for impl in _IMPLS:
            if impl.count:
                c[(impl.name, impl.path)] += impl.count
        return c

    def __getitem__(self, key):
        return self._snapshot()[key]

    def __iter__(self):
        return iter(self._snapshot())

    def __len__(self):
        return len(self._snapshot())

    def items(self):
        return self._snapshot().items()


served = _Served()


class _TLS(threading.local):
    def __init__(self):
        self.decomposing: set = set()


TLS = _TLS()

from ..ops.dispatcher import UNRESOLVED as _UNRESOLVED
_PD = _python_dispatch.TLS
_AUTOCAST_LIVE = _autocast.LIVE
_PYDISPATCHER_ACTIVE = _python_dispatcher.ACTIVE
# argument types that can never make a call observable to autograd or Python dispatch
_INERT = frozenset((int, float, bool, type(None), str, complex))
_PLAIN: set = set()  # torch.Tensor, nn.Parameter (python_classes.plain_tensor_types), once known


def aten_dispatch(op: OperatorHandle, args: tuple, kwargs: dict) -> Any:
    if _PYDISPATCHER_ACTIVE[0] and _python_dispatcher.enabled():
        py_kernel = _python_dispatcher.above_autograd(op, op_overload(op))
        if py_kernel is not None:
            return py_kernel(*args, **kwargs)
    if _AUTOCAST_LIVE[0] and _autocast.wants(op):
        # the AutocastCPU key: above autograd (forward AD's tangents included), below the
        # Python dispatcher; upstream's vmap sits above it, ours runs after (either order
        # casts the same arguments)
        return _autocast.dispatch(op, args, kwargs, aten_dispatch)
    if _forward[0] is not None:
        # a forward-AD level is active: the autograd layer computes tangents of dual inputs
        result = _forward[0](op, args, kwargs)
        if result is not FORWARD_PASS:
            return result
    if _VMAP_LIVE[0] and _batching[0](op, args, kwargs, True):
        return _batching[1](op, args, kwargs, True)
    plain = op.plain
    if plain is _UNRESOLVED:
        plain = _resolve_plain(op)
    if plain is not None and not (_PD.stack or _PD.infra) and \
            _plain_args(args, grad := _GRAD.grad_enabled and plain.grad) and \
            (not kwargs or _INERT.issuperset(map(type, kwargs.values())) or  # numbers only
             _plain_args(kwargs.values(), grad)) and \
            not (_BITS_LIVE[0] and _has_bits(args, kwargs)) and \
            not (plain.factory and kwargs and _factory_elsewhere(kwargs)):
        # dense tensors that override no dispatch and, with grad mode on, neither require grad
        # nor have history (or the operator's outputs are never differentiable): nothing above
        # the kernel can observe the call (the keys upstream would skip; with grad mode off its
        # autograd key only redispatches), so it goes straight there
        plain.count += 1
        if plain.quiet:   # (``call`` inline: the hottest lane)
            token = _QUIET_SET(_QUIET_STATE)
            try:
                result = plain.fn(*args, **kwargs) if kwargs else plain.fn(*args)
            finally:
                _QUIET_RESET(token)
        else:
            result = plain.fn(*args, **kwargs) if kwargs else plain.fn(*args)
        if plain.mutated:
            _bump_versions(plain.mutated, args, kwargs)
        return result
    cia = op.cache.get("CompositeImplicitAutograd", _UNRESOLVED)
    if cia is _UNRESOLVED:
        cia = op.cache["CompositeImplicitAutograd"] = resolve_composite_implicit(op)
    if cia is not None:
        fast = cia.fast
        if fast is not None and not (_GRAD.grad_enabled and _any_requires_grad(args, kwargs)
                                     and not autograd_excluded()) \
                and not _python_dispatch.wants_python_dispatch(args, kwargs) \
                and not (_BITS_LIVE[0] and _has_bits(args, kwargs)):
            fast.count += 1
            return call(fast, args, kwargs)
        cia.count += 1
        return call(cia, args, kwargs)
    if _GRAD.grad_enabled and _any_requires_grad(args, kwargs) and not autograd_excluded():
        return _autograd[0](op, args, kwargs)
    return below_autograd(op, args, kwargs)


def _plain_args(values, grad: bool = True) -> bool:
    """Only dense plain tensors that override no dispatch and, where ``grad`` (grad mode is on),
    neither require grad nor have history; and non-tensors (which neither autograd nor Python
    dispatch looks at). A dtype stored as bit patterns is not plain: backend_key routes it
    (bit_stored_ops)."""
    plain = _PLAIN
    for a in values:
        tp = type(a)
        if tp in plain:
            if a._np is None or a._dtype in _BIT_STORED or grad and (
                    a._requires_grad or a._grad_fn is not None or
                    (a._view_base is not None and _needs_grad(a._view_base))):
                return False
        elif tp is list or tp is tuple:
            for x in a:
                tx = type(x)
                if tx in plain:
                    if x._np is None or x._dtype in _BIT_STORED or grad and (
                            x._requires_grad or x._grad_fn is not None or
                            (x._view_base is not None and _needs_grad(x._view_base))):
                        return False
                elif tx not in _INERT and isinstance(x, TensorBase):
                    return False
        elif tp not in _INERT:
            if isinstance(a, TensorBase):
                return False
            # a list subclass (torch.fx's immutable_list, as an Interpreter passes it)
            if isinstance(a, (list, tuple)) and not _plain_args(tuple(a), grad):
                return False
    return True


def _resolve_plain(op: OperatorHandle):
    """The implementation a call with plain arguments reaches: a CompositeImplicitAutograd
    operator's fast kernel, or the CPU kernel of any other; None where there is none."""
    if not _PLAIN:
        from ..core.python_classes import plain_tensor_types

        _PLAIN.update(plain_tensor_types())
        if not _PLAIN:
            return None  # torch's Python classes do not exist yet: decide later
    cia = op.cache.get("CompositeImplicitAutograd", _UNRESOLVED)
    if cia is _UNRESOLVED:
        cia = op.cache["CompositeImplicitAutograd"] = resolve_composite_implicit(op)
    if cia is not None:
        op.plain = cia.fast
        return cia.fast
    devices = [a for a in op.schema.arguments if "Device" in str(a.real_type)]
    if devices and not (len(devices) == 1 and devices[0].kwarg_only and
                        devices[0].name == "device"):
        op.plain = None  # a device given positionally: backend_key decides
        return None
    plain = op.cache.get("CPU")
    if plain is None:
        plain = op.cache["CPU"] = resolve(op, "CPU")
    if _dont_record[0](op):
        # arguments that require grad may take the lane too, the kernel run with grad mode off
        # as below autograd (its own calls record nothing)
        cpu = plain
        plain = Impl(_grad_mode_off(cpu.fn), cpu.path, cpu.mutated, name=cpu.name)
        plain.quiet = cpu.quiet
        plain.grad = False
    # a factory's backend comes from its keywords (backend_key): the lane checks them
    plain.factory = bool(devices)
    op.plain = plain
    return plain


def _grad_mode_off(fn: Callable) -> Callable:
    def run(*args, **kwargs):
        prev = _GRAD.grad_enabled
        _GRAD.grad_enabled = False
        try:
            return fn(*args, **kwargs)
        finally:
            _GRAD.grad_enabled = prev
    return run


def _factory_elsewhere(kwargs: dict) -> bool:
    """Whether a factory's keywords send it past the CPU kernel, as backend_key reads them: a
    dtype stored as bit patterns, or (a tensor argument would have left the lane) a meta
    device."""
    return kwargs.get("dtype") in _BIT_STORED or _meta_device(kwargs.get("device"))


def _meta_device(dev) -> bool:
    """Whether a ``device`` argument (a device, a string, None) names the meta device."""
    return dev is not None and (getattr(dev, "type", None) == "meta" or dev == "meta" or
                                (isinstance(dev, str) and dev.startswith("meta")))


def _records_everything(op: OperatorHandle) -> bool:
    return False


# whether an operator's outputs are never differentiable, so autograd records nothing for it
# (the autograd layer, above this one, installs its rule when imported)
_dont_record: list = [_records_everything]


def register_dont_record(rule: Callable) -> None:
    """(An operator resolved before keeps the conservative answer: recorded.)"""
    _dont_record[0] = rule


def _bump_versions(mutated: tuple, args: tuple, kwargs: dict) -> None:
    for i in mutated:
        target = args[i] if isinstance(i, int) else kwargs.get(i)
        if isinstance(target, TensorBase):
            if target._tn_inference and not _GRAD.inference:
                # upstream checks after the kernel wrote, so the write stays (as here)
                raise RuntimeError(
                    "Inplace update to inference tensor outside InferenceMode is not allowed."
                    "You can make a clone to get a normal tensor before doing inplace update."
                    "See https://github.com/pytorch/rfcs/pull/17 for more details.")
            target._version_ref[0] += 1
            if target._st is not None:
                target._st._tn_writes += 1  # aliases with their own version counter share it


def below_autograd(op: OperatorHandle, args: tuple, kwargs: dict) -> Any:
    """What runs under the Autograd key: batching (a live vmap), Python dispatch, then the
    backend kernel."""
    if not (_VMAP_LIVE[0] or _BITS_LIVE[0] or _PD.stack or _PD.infra) and \
            _plain_args(args, False) and \
            (not kwargs or _INERT.issuperset(map(type, kwargs.values())) or
             _plain_args(kwargs.values(), False) and not _factory_elsewhere(kwargs)):
        # dense CPU tensors of classes that override no dispatch, no dtype stored as bits, no
        # meta device: what the steps below would decide (no batching, no Python dispatch, the
        # CPU kernel), decided in one pass over the arguments (a recorded call's path)
        return _serve(op, "CPU", args, kwargs)
    if _VMAP_LIVE[0] and _batching[0](op, args, kwargs, False):
        return _batching[1](op, args, kwargs, False)
    if _BITS_LIVE[0] and _has_bits(args, kwargs):
        # a lazily conjugated/negated argument: the Conjugate and Negative keys' fallback
        return _math_bits.fallback(op, args, kwargs, _below_math_bits)
    return _below_math_bits(op, args, kwargs)


def _below_math_bits(op: OperatorHandle, args: tuple, kwargs: dict) -> Any:
    if _python_dispatch.wants_python_dispatch(args, kwargs):
        return _python_dispatch.dispatch(op, args, kwargs)
    return backend_dispatch(op, args, kwargs)


def _autograd_not_loaded(op, args, kwargs):
    raise RuntimeError(f"{op.name} needs autograd, and the autograd layer "
                       "(torchnative.csrc.autograd) is not loaded")


# autograd's entry: the autograd layer, above this one, installs it when imported
_autograd: list = [_autograd_not_loaded]


def register_autograd(entry: Callable) -> None:
    _autograd[0] = entry


# forward AD's entry while a dual level is active (None otherwise: nothing to ask); it returns
# FORWARD_PASS when no argument carries a tangent
_forward: list = [None]
FORWARD_PASS = object()


def set_forward_ad(entry: Callable | None) -> None:
    _forward[0] = entry


def past_forward_ad(op: OperatorHandle, args: tuple, kwargs: dict) -> Any:
    """What runs below the forward-AD entry for an operator with dual inputs: its composite
    (never its fast kernel, which would not see the tangents), autograd, then the rest."""
    cia = op.cache.get("CompositeImplicitAutograd", _UNRESOLVED)
    if cia is _UNRESOLVED:
        cia = op.cache["CompositeImplicitAutograd"] = resolve_composite_implicit(op)
    if cia is not None:
        cia.count += 1
        return call(cia, args, kwargs)
    if _GRAD.grad_enabled and _any_requires_grad(args, kwargs) and not autograd_excluded():
        return _autograd[0](op, args, kwargs)
    return below_autograd(op, args, kwargs)


def _no_batching(op, args, kwargs, above_autograd) -> bool:
    return False


# the batching layer (csrc/functorch installs it when imported): wants(op, args, kwargs,
# above_autograd) and dispatch(op, args, kwargs, above_autograd); asked only while a vmap level
# is live
_batching: list = [_no_batching, None]
_VMAP_LIVE: list = [0]


def register_batching(live: list, wants: Callable, dispatch: Callable) -> None:
    global _VMAP_LIVE
    _VMAP_LIVE = live
    _batching[0], _batching[1] = wants, dispatch


def _any_requires_grad(args: tuple, kwargs: dict) -> bool:
    for a in args:
        if isinstance(a, TensorBase):
            if _needs_grad(a):
                return True
        elif isinstance(a, (list, tuple)):
            for x in a:
                if isinstance(x, TensorBase) and _needs_grad(x):
                    return True
    for a in kwargs.values():
        if isinstance(a, TensorBase) and _needs_grad(a):
            return True
    return False


def _needs_grad(a: TensorBase) -> bool:
    """Requires grad or has history; a view also when its base gained history after it was
    made (its grad_fn is then refreshed on use, as upstream's)."""
    if a._requires_grad or a._grad_fn is not None:
        return True
    b = a._view_base
    return b is not None and (b._requires_grad or b._grad_fn is not None)


def resolve_composite_implicit(op: OperatorHandle):
    impl = _resolve_composite_implicit(op)
    if impl is not None:
        impl.name = op.name
        _quiet_unless_view(op, impl)
        if impl.fast is not None:
            _quiet_unless_view(op, impl.fast)
    return impl


def _quiet_unless_view(op: OperatorHandle, impl: Impl) -> None:
    """A view (every return an alias its call does not write) does no float arithmetic: it
    skips the quiet state (its two context-variable calls and the cache miss of numpy's next
    read of its state, ~1 us a call here: measured in docs/performance.md)."""
    returns = op.schema.returns
    if returns and all(r.alias_info is not None and not r.alias_info.is_write for r in returns):
        impl.quiet = False


def _resolve_composite_implicit(op: OperatorHandle):
    """A CompositeImplicitAutograd operator runs as the operators it is made of, above Python
    dispatch and autograd, as upstream does: our composite kernel, a registered Python CIA
    kernel, or upstream's Python decomposition. None for other operators."""
    from ..ops.kernel_registry import COMPOSITE, FAST, ensure_loaded

    if "CompositeImplicitAutograd" not in op.static_keys and \
            "CompositeImplicitAutograd" not in op.py_kernels:
        return None
    if "CPU" in op.static_keys:
        # upstream's dispatcher (computeDispatchTableEntry, 2.2): a kernel registered for the
        # backend wins over the composite for that backend and its autograd key, so a CPU
        # tensor never runs it (silu_backward, mish_backward, native_channel_shuffle)
        return None
    ensure_loaded()
    short = _kernel_name(op)
    fast = FAST.get(short)
    if fast is not None:
        fast = Impl(fast, "fast", (), name=op.name)
    own = COMPOSITE.get(short)
    if own is not None:
        return Impl(own, "composite", (), fast)
    py = op.py_kernels.get("CompositeImplicitAutograd")
    if py is not None:
        return Impl(normalized(op, _with_keyset(py, "CompositeImplicitAutograd")), "python:CIA",
                    (), fast)
    decomp = _decomposition(op)
    if decomp is not None:
        return Impl(_guarded_decomposition(op, normalized(op, decomp)), "decomposition", (),
                    fast)
    return None


def backend_dispatch(op: OperatorHandle, args: tuple, kwargs: dict) -> Any:
    return _serve(op, backend_key(args, kwargs), args, kwargs)


def _serve(op: OperatorHandle, key: str, args: tuple, kwargs: dict) -> Any:
    """The kernel of ``key`` (resolved once) on the call; the versions it bumps."""
    impl = op.cache.get(key)
    if impl is None:
        impl = op.cache[key] = resolve(op, key)
    impl.count += 1
    if impl.quiet:   # (``call`` inline)
        token = _QUIET_SET(_QUIET_STATE)
        try:
            result = impl.fn(*args, **kwargs)
        finally:
            _QUIET_RESET(token)
    else:
        result = impl.fn(*args, **kwargs)
    if impl.mutated:
        _bump_versions(impl.mutated, args, kwargs)
    return result


_BIT_KEYS = {d: f"CPU:{d._name}" for d in _BIT_STORED}
_BIT_DTYPES = {k: d for d, k in _BIT_KEYS.items()}


def backend_key(args: tuple, kwargs: dict) -> str:
    """'Meta' if any tensor argument is meta: upstream dispatches on the union of the arguments'
    keys, where Meta's backend outranks CPU's (``1 - meta_tensor`` wraps 1 as a CPU scalar tensor
    and still runs the meta kernel). With no tensor argument, the ``device`` argument decides."""
    tensors = False
    bits = kwargs.get("dtype") if kwargs else None  # a dtype stored as bit patterns: "CPU:<dtype>"
    for a in args:
        if isinstance(a, TensorBase):
            if a._np is None:
                return "Meta"
            tensors = True
            if a._dtype in _BIT_STORED:
                bits = a._dtype
        elif isinstance(a, (list, tuple)) and a and isinstance(a[0], TensorBase):
            for t in a:
                if isinstance(t, TensorBase):
                    if t._np is None:
                        return "Meta"
                    if t._dtype in _BIT_STORED:
                        bits = t._dtype
            tensors = True
    for a in kwargs.values():
        if isinstance(a, TensorBase):
            if a._np is None:
                return "Meta"
            tensors = True
            if a._dtype in _BIT_STORED:
                bits = a._dtype
    if not tensors and _meta_device(kwargs.get("device")):
        return "Meta"
    return _BIT_KEYS[bits] if bits in _BIT_STORED else "CPU"


def _mutated_positions(op: OperatorHandle) -> tuple:
    """The arguments whose version counter a call bumps: the written arguments of in-place and
    out= operators that the operator also returns (upstream's generated ADInplaceOrView kernels
    bump what they return: ``_amp_update_scale_`` bumps the scale it returns, not the growth
    tracker it also writes); an aten operator that mutates as a side effect
    (``_native_batch_norm_legit``'s running stats) bumps nothing upstream."""
    if op.native is not None and op.native.kind not in ("inplace", "out"):
        return ()
    returned = {s for r in op.schema.returns if r.alias_info is not None
                for s in r.alias_info.before_set}
    out = []
    for i, a in enumerate(op.schema.arguments):
        info = a.alias_info
        if info is not None and info.is_write and returned.intersection(info.before_set):
            out.append(a.name if a.kwarg_only else i)
    return tuple(out)


def resolve(op: OperatorHandle, key: str) -> Impl:
    if key in _BIT_DTYPES:  # CPU, for the operators those dtypes may reach (bit_stored_ops)
        impl = _bit_stored_impl(op, _BIT_DTYPES[key])
    else:
        impl = _resolve(op, key)
    impl.name = op.name
    _quiet_unless_view(op, impl)
    return impl


def _bit_stored_impl(op: OperatorHandle, dt) -> Impl:
    short = _kernel_name(op)
    returns = op.schema.returns
    is_view = bool(returns) and all(r.alias_info is not None and not r.alias_info.is_write
                                    for r in returns)
    if _bit_stored_ops.reaches_kernel(short, is_view, dt):
        return _resolve(op, "CPU")
    error = _bit_stored_ops.refusal(short, dt)

    def refuse(*args, **kwargs):
        raise error
    return Impl(refuse, "refusal", ())


def _resolve(op: OperatorHandle, key: str) -> Impl:
    from ..ops.kernel_registry import KERNELS, META_OK, ensure_loaded

    ensure_loaded()
    mutated = _mutated_positions(op)
    py = op.py_kernels.get(key)
    if py is not None:
        return Impl(normalized(op, _with_keyset(py, key)), f"python:{key}", mutated)
    short = _kernel_name(op)
    own = KERNELS.get(short)
    if own is not None and (key == "CPU" or short in META_OK):
        return Impl(own, "kernel", mutated)
    if key == "Meta":
        meta = _upstream_meta(op)
        if meta is not None:
            return Impl(normalized(op, meta), "meta", mutated)
    derived = _derived_from_functional(op, key)
    if derived is not None:
        return Impl(derived, "structured", mutated)
    for composite in ("CompositeExplicitAutograd", "CompositeImplicitAutograd"):
        py = op.py_kernels.get(composite)
        if py is not None:
            return Impl(normalized(op, _with_keyset(py, composite)), f"python:{composite}",
                        mutated)
    decomp = _decomposition(op)
    if decomp is not None:
        return Impl(_guarded_decomposition(op, normalized(op, decomp)), "decomposition", mutated)
    return Impl(_refusal(op, key), "refused", mutated)


def _kernel_name(op: OperatorHandle) -> str:
    """The registry's key: ``add.Tensor`` for aten operators, the full name for others."""
    return op.name.split("::", 1)[1] if op.qualname.startswith("aten::") else op.name


def _with_keyset(entry, key: str) -> Callable:
    fn, with_keyset = entry
    if not with_keyset:
        return fn
    from ..ops.dispatch_keys import DispatchKeySet

    keyset = DispatchKeySet(key)
    return lambda *a, **k: fn(keyset, *a, **k)


def _refusal(op: OperatorHandle, key: str) -> Callable:
    def refused(*args, **kwargs):
        raise TorchnativeNotImplementedError(
            op.name, f"no {key} kernel or decomposition in torchnative for this operator")

    return refused


def op_overload(op: OperatorHandle):
    """upstream's OpOverload object (torch.ops.ns.name.overload) for a handle."""
    obj = op.cache.get("__opoverload__")
    if obj is None:
        import torch

        ns, name = op.qualname.split("::")
        packet = getattr(getattr(torch.ops, ns), name)
        obj = op.cache["__opoverload__"] = getattr(packet, op.overload or "default")
    return obj


def _upstream_meta(op: OperatorHandle):
    """A meta function upstream's Python registered on the OpOverload (py_impl(Meta))."""
    from ..core.enums import DispatchKey

    try:
        overload = op_overload(op)
    except (AttributeError, RuntimeError):
        return None
    return overload.py_kernels.get(DispatchKey.Meta)


def _decomposition(op: OperatorHandle):
    try:
        overload = op_overload(op)
    except (AttributeError, RuntimeError):
        return None
    from torch._decomp import decomposition_table
    from torch._decomp import global_decomposition_table

    fn = decomposition_table.get(overload)
    if fn is None:
        fn = global_decomposition_table["pre_autograd"].get(overload)
    return fn


def _fresh(result):
    """A view the decomposition returned, presented as the new tensor the operator's schema
    promises (same memory, no view base, its own version counter): upstream's kernel for a
    functional operator never returns a view, and autograd treats views differently."""
    if isinstance(result, TensorBase):
        if result._view_base is None or result.__dict__:
            return result  # not a view, or a subclass/wrapper whose state a copy would lose
        out = make(result._st, result._dtype, result._size, result._stride, result._offset,
                   type(result), np_view=result._np)
        if result._tn_inference:
            out._tn_inference = True
        return out
    if isinstance(result, tuple):  # an operator returns a plain tuple, never the named tuple
        return tuple(_fresh(r) for r in result)  # a decomposition builds (bindings name it)
    if isinstance(result, list):
        return [_fresh(r) for r in result]
    return result


def _guarded_decomposition(op: OperatorHandle, fn: Callable) -> Callable:
    """A decomposition must not re-enter the same operator (it would recurse forever). Where the
    schema's outputs alias nothing, a view among them is made a fresh tensor (``_fresh``)."""
    functional = all(r.alias_info is None for r in op.schema.returns)

    def decomposed(*args, **kwargs):
        if op.name in TLS.decomposing:
            raise TorchnativeNotImplementedError(
                op.name, "its decomposition calls itself and torchnative has no kernel for it")
        TLS.decomposing.add(op.name)
        try:
            result = fn(*args, **kwargs)
        finally:
            TLS.decomposing.discard(op.name)
        if result is NotImplemented:
            raise TorchnativeNotImplementedError(
                op.name, "upstream's decomposition does not handle these arguments and "
                "torchnative has no kernel for them")
        return _fresh(result) if functional else result

    return decomposed


def _derived_from_functional(op: OperatorHandle, key: str):
    nf = op.native
    if nf is None or nf.functional is None or nf.kind not in ("inplace", "out"):
        return None
    qual, _, overload = nf.functional.partition(".")
    functional = REGISTRY.find(f"aten::{qual}", overload)
    if functional is None:
        return None
    impl = functional.cache.get(key)
    if impl is None:
        impl = functional.cache[key] = resolve(functional, key)
    if impl.path == "refused":
        return None
    from .structured import inplace_wrapper, out_wrapper

    if nf.kind == "inplace":
        return inplace_wrapper(impl.fn, op)
    return out_wrapper(impl.fn, op, functional)


def call_builtin_kernel(op: OperatorHandle, key: str, args: tuple, kwargs: dict) -> Any:
    """The kernel upstream's C++ would have at ``key`` (torchnative's own, for us)."""
    return backend_dispatch(op, args, kwargs)


def _torch_function_first(args: tuple, kwargs: dict):
    """The arguments whose __torch_function__ sees a torch.ops call first, as upstream's parser
    does for OpOverloads and packets (a tensor subclass gets its own type back), or None."""
    if wants_torch_function(args) or (kwargs and wants_torch_function(kwargs.values())):
        return [a for a in overridable_arguments(args, kwargs) if _has_attr_override(a)]
    return None


def _call_overload(op: OperatorHandle):
    fill = [_UNRESOLVED]  # the operator's positional defaults, once known (with_schema_defaults)

    def call(*args, **kwargs):
        relevant = _torch_function_first(args, kwargs)
        if relevant is not None:  # with the OpOverload as the function
            import torch.overrides

            return torch.overrides.handle_torch_function(op_overload(op), relevant, *args,
                                                         **kwargs)
        f = fill[0]
        if f is _UNRESOLVED:
            f = fill[0] = _positional_defaults(op)
        if f is not None and len(args) < len(f):  # (no call frame for a complete one)
            args, kwargs = _filled(f, args, kwargs)
        return aten_dispatch(op, args, kwargs)

    call.__name__ = op.name.replace("::", ".")
    return call


def with_schema_defaults(op: OperatorHandle, args: tuple, kwargs: dict) -> tuple:
    """A call of a composite operator (one with a CompositeImplicitAutograd kernel) with its
    positional parameters all positional: those given by keyword moved in, those left out
    filled with the schema's defaults. Upstream's boxed call holds them so, and the composite
    computes with them (``int[2] stride=1`` as [1, 1]) where ours would take its Python
    function's own defaults; the other operators' kernels take the values themselves."""
    fill = _positional_defaults(op)
    if fill is None or len(args) >= len(fill):
        return args, kwargs
    return _filled(fill, args, kwargs)


def _positional_defaults(op: OperatorHandle):
    """(name, has a default, the default) of each positional parameter of a composite operator;
    None for any other."""
    fill = op.cache.get("positional defaults", _UNRESOLVED)
    if fill is _UNRESOLVED:
        cia = op.cache.get("CompositeImplicitAutograd", _UNRESOLVED)
        if cia is _UNRESOLVED:
            cia = op.cache["CompositeImplicitAutograd"] = resolve_composite_implicit(op)
        fill = None if cia is None else tuple(
            (a.name, a.has_default_value(), a.default_value if a.has_default_value() else None)
            for a in op.schema.arguments if not a.kwarg_only)
        op.cache["positional defaults"] = fill
    return fill


def _filled(fill: tuple, args: tuple, kwargs: dict) -> tuple:
    out, rest = list(args), dict(kwargs)
    for name, has, default in fill[len(args):]:
        if name in rest:
            out.append(rest.pop(name))
        elif has:
            out.append(list(default) if type(default) is list else default)
        else:
            break  # a required argument left out: the kernel's own error names it
    return tuple(out), rest


def _call_overload_with_key(op: OperatorHandle):
    def call_dk(dispatch_key, *args, **kwargs):
        from ..core.enums import DispatchKey

        name = dispatch_key.name if isinstance(dispatch_key, DispatchKey) else str(dispatch_key)
        if name in ("CompositeImplicitAutograd", "CompositeExplicitAutograd"):
            py = op.py_kernels.get(name)
            if py is not None:
                return _with_keyset(py, name)(*args, **kwargs)
            decomp = _decomposition(op)
            if decomp is not None:
                return decomp(*args, **kwargs)
        return backend_dispatch(op, args, kwargs)

    return call_dk


def overload_callables(op: OperatorHandle):
    if op._op is None:
        op._op = _call_overload(op)
        op._op_dk = _call_overload_with_key(op)
    return op._op, op._op_dk


def packet_callable(qualname: str):
    """Calling ``torch.ops.ns.name(...)`` picks the overload whose schema binds the arguments."""

    ordered = [packet_overloads(qualname)]
    # what the overload choice reads off the arguments (_binding_key) -> the overload, and
    # whether the call's values convert (a bool for an int, a tuple of ints for a list); with no
    # torch function mode, plain arguments reach no __torch_function__ first
    chosen: dict = {}
    from ..core.torch_function import TLS as tf
    from .schema_binding import bind, numbers_as_tensors, select_overload

    as_tensors = numbers_as_tensors(qualname)

    def call(*args, **kwargs):
        if len(ordered[0]) != len(REGISTRY.overloads(qualname)):  # an overload defined since
            ordered[0] = packet_overloads(qualname)
            chosen.clear()
        key = _binding_key(args, kwargs)
        if key is not None and not (tf.stack and tf.state != 2):
            hit = chosen.get(key)
            if hit is None:
                op, new_args, new_kwargs = select_overload(ordered[0], args, kwargs)
                fill = _positional_defaults(op)  # (the pattern fixes how many are given)
                chosen[key] = (op, not _same_call(args, kwargs, new_args, new_kwargs),
                               fill if fill is not None and len(args) < len(fill) else None)
                return aten_dispatch(op, *with_schema_defaults(op, new_args, new_kwargs))
            op, converts, fill = hit
            if converts:
                args, kwargs = bind(op.schema, args, kwargs, as_tensors)
            if fill is not None:
                args, kwargs = _filled(fill, args, kwargs)
            return aten_dispatch(op, args, kwargs)

        relevant = _torch_function_first(args, kwargs)
        if relevant is not None:  # with the packet as the function
            import torch
            import torch.overrides

            ns, name = qualname.split("::")
            return torch.overrides.handle_torch_function(getattr(getattr(torch.ops, ns), name),
                                                         relevant, *args, **kwargs)
        op, args, kwargs = select_overload(ordered[0], args, kwargs)
        return aten_dispatch(op, *with_schema_defaults(op, args, kwargs))

    call.__name__ = qualname.split("::")[-1]
    return call


_SIMPLE = frozenset((int, float, bool, complex, str, type(None)))


def _same_call(args: tuple, kwargs: dict, new_args: tuple, new_kwargs: dict) -> bool:
    """Whether binding left every value as it was given (nothing converted)."""
    return all(a is b for a, b in zip(args, new_args)) and \
        all(v is new_kwargs[k] for k, v in kwargs.items())


def _binding_key(args: tuple, kwargs: dict):
    """The facts of a call's arguments that decide which overload's schema binds them and how
    they convert (schema_binding.convert): a number's, string's or None's type; a plain tensor's
    type and whether it holds one element (then it binds an int, a float or a bool); a list's or
    tuple's own facts and its elements'; keywords by name. None where a value is anything else
    (a tensor subclass, a dtype, an object): its call takes the full selection."""
    key = tuple(map(_binding_fact, args))
    if None in key:
        return None
    if kwargs:
        facts = tuple(map(_binding_fact, kwargs.values()))
        if None in facts:
            return None
        key += tuple(zip(kwargs, facts))
    return key


def _binding_fact(v):
    tp = type(v)
    if tp in _SIMPLE:
        return tp
    if tp in _PLAIN:
        return tp, numel_of(v) == 1
    if tp is list or tp is tuple:
        facts = tuple(map(_binding_fact, v))
        return None if None in facts else (tp, facts)
    return None


def redispatch(op: OperatorHandle, keyset, args: tuple, kwargs: dict) -> Any:
    """A redispatch from a kernel registered in Python (an autograd kernel from
    torch.library.register_autograd passes ``keyset & _after_autograd_keyset``): with autograd
    still in the set the call starts over, else it continues below autograd (Python dispatch,
    then the backend kernel)."""
    if keyset.has("AutogradFunctionality"):
        return aten_dispatch(op, args, kwargs)
    return below_autograd(op, args, kwargs)


register_door(packet_callable=packet_callable, overload_callables=overload_callables,
              call_builtin_kernel=call_builtin_kernel, redispatch=redispatch,
              aten_dispatch=aten_dispatch, backend_dispatch=backend_dispatch,
              op_overload=op_overload)
