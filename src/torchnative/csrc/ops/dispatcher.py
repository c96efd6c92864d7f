"""The operator registry: ATen's operators from native_functions.yaml plus Python registrations.

An ``OperatorHandle`` is one overload: its schema, tags, the dispatch keys that have a kernel in
upstream's build (so ``_dispatch_has_kernel_for_dispatch_key`` answers as upstream does, and
upstream's decomposition and meta tables come out the same), and the Python kernels registered
through ``torch.library`` (upstream's meta functions, decompositions, user custom ops).
Calling an operator goes through the one door, ``door.aten_dispatch``.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..core.enums import DispatchKey, Tag
from .native_functions import by_qualname
from ..core.tables import cpp_ops_by_qualname


UNRESOLVED = object()  # a door fact not computed yet


class OperatorHandle:
    __slots__ = ("qualname", "overload", "schema_str", "tags", "static_keys", "py_kernels",
                 "fallthrough", "_schema", "native", "__weakref__", "_op", "_op_dk", "cache",
                 "name", "plain")

    def __init__(self, qualname: str, overload: str, schema_str: str, tags, static_keys,
                 native=None):
        self.qualname = qualname
        self.overload = overload
        self.schema_str = schema_str
        self.tags = tuple(tags)
        self.static_keys = frozenset(static_keys)  # kernels upstream's C++ build registers
        self.py_kernels: dict[str, tuple[Callable, bool]] = {}  # key -> (fn, with_keyset)
        self.fallthrough: set[str] = set()
        self._schema = None
        self.native = native
        self._op = None
        self._op_dk = None
        self.cache: dict[str, Any] = {}  # per-operator facts the door computes once
        self.plain = UNRESOLVED  # the door's plain-argument kernel (an attribute: read per call)
        self.name = f"{qualname}.{overload}" if overload else qualname

    @property
    def schema(self):
        if self._schema is None:
            from .schema_cache import parse_builtin

            self._schema = parse_builtin(self.full_schema_str)
        return self._schema

    @property
    def full_schema_str(self) -> str:
        ns = self.qualname.split("::")[0]
        return self.schema_str if "::" in self.schema_str.split("(")[0] else f"{ns}::{self.schema_str}"

    def forget(self) -> None:
        """Drop what the door resolved (a kernel was registered or removed)."""
        self.cache.clear()
        self.plain = UNRESOLVED

    def has_kernel_for(self, key: str) -> bool:
        return key in self.py_kernels or key in self.static_keys

    def __repr__(self):
        return f"OperatorHandle({self.name})"


class Registry:
    """All operators, ATen's loaded lazily per name (there are 3,101)."""

    def __init__(self):
        self._ops: dict[str, dict[str, OperatorHandle]] = {}
        self._builtin_loaded: set[str] = set()
        self.fallbacks: dict[tuple[str, str], tuple[Callable, bool]] = {}

    def _load_builtin(self, qualname: str) -> None:
        """Operators upstream's C++ defines: native_functions.yaml's, then the rest it registers."""
        if qualname in self._builtin_loaded:
            return
        self._builtin_loaded.add(qualname)
        ops = self._ops.setdefault(qualname, {})
        for overload, nf in (by_qualname().get(qualname) or {}).items():
            if overload not in ops:
                tags = [Tag[t] for t in sorted(nf.tags) if t in Tag.__members__]
                ops[overload] = OperatorHandle(qualname, overload, nf.schema, tags, nf.dispatch, nf)
        for entry in cpp_ops_by_qualname().get(qualname, ()):
            head = entry["schema"].split("(")[0]
            overload = head.partition(".")[2]
            if overload not in ops:
                ops[overload] = OperatorHandle(qualname, overload, entry["schema"], (),
                                               entry["keys"])
        if not ops:
            del self._ops[qualname]

    def overloads(self, qualname: str) -> dict[str, OperatorHandle]:
        self._load_builtin(qualname)
        return self._ops.get(qualname, {})

    def find(self, qualname: str, overload: str) -> OperatorHandle | None:
        # `overloads` inlined: queries such as `_dispatch_has_kernel_for_dispatch_key` arrive
        # on every call of a custom operator's layer
        if qualname not in self._builtin_loaded:
            self._load_builtin(qualname)
        ops = self._ops.get(qualname)
        return None if ops is None else ops.get(overload)

    def define(self, schema_str: str, tags=()) -> OperatorHandle:
        from .schema import parse_schema

        schema = parse_schema(schema_str)
        qualname, overload = schema.name, schema.overload_name
        if self.find(qualname, overload) is not None:
            raise RuntimeError(
                f"Tried to register an operator ({schema}) with the same name and overload name "
                "multiple times.")
        op = OperatorHandle(qualname, overload, str(schema), tags, ())
        op._schema = schema
        self._ops.setdefault(qualname, {})[overload] = op
        return op

    def all_names(self) -> list[str]:
        names = {f"aten::{nf.name}" + (f".{nf.overload}" if nf.overload else "")
                 for nf in by_qualname_all()}
        for q, ops in self._ops.items():
            names.update(o.name for o in ops.values())
        return sorted(names)


def by_qualname_all():
    from .native_functions import native_functions

    return native_functions()


REGISTRY = Registry()


def split_name(name: str) -> tuple[str, str]:
    """``"aten::add.Tensor"`` -> ("aten::add", "Tensor")."""
    qual, _, overload = name.partition(".")
    return qual, overload


def find_or_throw(name: str, overload: str = "") -> OperatorHandle:
    op = REGISTRY.find(name, overload)
    if op is None:
        raise RuntimeError(f"Could not find schema for {name}.{overload}" if overload
                           else f"Could not find schema for {name}")
    return op


# "ns::op.overload" -> its handle, once found (handles are never removed: a name keeps its
# handle); a custom operator's layer asks ``_dispatch_has_kernel_for_dispatch_key`` every call
_BY_NAME: dict[str, OperatorHandle] = {}


def _op_from_name(name: str) -> OperatorHandle | None:
    op = _BY_NAME.get(name)
    if op is None:
        qual, overload = split_name(name)
        op = REGISTRY.find(qual, overload)
        if op is not None:
            _BY_NAME[name] = op
    return op


# --- the torch._C functions upstream's torch/_ops.py and torch/library.py call -------------------

def dispatch_has_kernel(name: str) -> bool:
    op = _op_from_name(name)
    return op is not None and bool(op.static_keys or op.py_kernels)


def dispatch_has_kernel_for_dispatch_key(name: str, key) -> bool:
    op = _op_from_name(name)
    if type(key) is not str:
        key = key.name if isinstance(key, DispatchKey) else str(key)
    return op is not None and op.has_kernel_for(key)


def dispatch_has_kernel_for_any_dispatch_key(name: str, keyset) -> bool:
    op = _op_from_name(name)
    if op is None:
        return False
    return any(keyset.has(DispatchKey[k]) for k in set(op.static_keys) | set(op.py_kernels)
               if k in DispatchKey.__members__ and k not in _ALIAS)


_ALIAS = {"CompositeImplicitAutograd", "CompositeExplicitAutograd",
          "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutogradNestedTensor",
          "Autograd", "FuncTorchBatchedDecomposition"}


def dispatch_has_computed_kernel_for_dispatch_key(name: str, key) -> bool:
    op = _op_from_name(name)
    if op is None:
        return False
    key = key.name if isinstance(key, DispatchKey) else str(key)
    if op.has_kernel_for(key):
        return True
    # a backend key is served by the composite kernels when it has none of its own
    return op.has_kernel_for("CompositeExplicitAutograd") or op.has_kernel_for(
        "CompositeImplicitAutograd")


def dispatch_kernel_for_dispatch_key_is_fallthrough(name: str, key) -> bool:
    op = _op_from_name(name)
    key = key.name if isinstance(key, DispatchKey) else str(key)
    return op is not None and key in op.fallthrough


def dispatch_has_backend_fallback(key) -> bool:
    key = key.name if isinstance(key, DispatchKey) else str(key)
    return any(k == key for (_, k) in REGISTRY.fallbacks)


# How a handle is called: the door (dispatch layer, above) installs these when imported.
DOOR: dict[str, Callable] = {}


def register_door(**entries: Callable) -> None:
    DOOR.update(entries)


_PACKET_ORDER: dict = {}


def packet_overloads(qualname: str) -> dict:
    """An operator's overloads (name -> handle) in the order upstream's packet call tries them
    (overload_order.json, read from upstream's _jit_get_operation), others after."""
    if not _PACKET_ORDER:
        import json
        from pathlib import Path

        doc = json.loads(Path(__file__).with_name("overload_order.json").read_text())
        _PACKET_ORDER.update(doc["order"])
    ops = REGISTRY.overloads(qualname)
    names = _PACKET_ORDER.get(qualname)
    if not names:
        return ops
    ordered = {}
    for n in names:
        key = "" if n == "default" else n
        if key in ops:
            ordered[key] = ops[key]
    for k, op in ops.items():
        ordered.setdefault(k, op)
    return ordered


def jit_get_operation(qualname: str):
    """(callable for the packet, overload names) as torch/_ops.py expects; (None, []) if unknown."""
    ops = packet_overloads(qualname)
    if not ops:
        raise RuntimeError(f"No such operator {qualname}")
    return DOOR["packet_callable"](qualname), list(ops)


def get_operation_overload(qualname: str, overload: str):
    op = REGISTRY.find(qualname, overload)
    if op is None:
        return None
    call, call_dk = DOOR["overload_callables"](op)
    return call, call_dk, list(op.tags)


def get_schema(qualname: str, overload: str):
    op = REGISTRY.find(qualname, overload)
    if op is None:
        raise RuntimeError(f"Schema for {qualname}.{overload} not found")
    return op.schema


def dispatch_get_all_op_names() -> list[str]:
    return REGISTRY.all_names()


class DispatchOperatorHandle:
    """The opaque handle ``torch._C._dispatch_find_schema_or_throw`` returns."""

    __slots__ = ("op",)

    def __init__(self, op: OperatorHandle):
        self.op = op

    def schema(self):
        return self.op.schema

    def debug(self) -> str:
        return repr(self.op)

    def redispatch_boxed(self, keyset, *args, **kwargs):
        """OperatorHandle::redispatchBoxed: the call continues with the keys ``keyset`` holds
        (the door decides where that is)."""
        return DOOR["redispatch"](self.op, keyset, args, kwargs)


def dispatch_find_schema_or_throw(name: str, overload: str) -> DispatchOperatorHandle:
    return DispatchOperatorHandle(find_or_throw(name, overload))


# --- torch.library's registration object ----------------------------------------------------------

class DispatchModule:
    """What ``torch._C._dispatch_library`` returns: a registration scope for one namespace."""

    def __init__(self, kind: str, ns: str, dispatch_key: str, file: str, line: int):
        if kind not in ("DEF", "IMPL", "FRAGMENT"):
            raise ValueError(f"Unknown library kind {kind}")
        self.kind, self.ns, self.dispatch_key = kind, ns, dispatch_key
        self.where = f"{file}:{line}"
        self._defs: list[OperatorHandle] = []
        self._impls: list[tuple[OperatorHandle, str]] = []
        self._fallbacks: list[tuple[str, str]] = []

    def define(self, schema: str, alias_analysis: str = "", tags=()) -> str:
        if self.kind == "IMPL":
            raise RuntimeError("Cannot define an operator inside of a IMPL library")
        if "::" not in schema.split("(")[0]:
            schema = f"{self.ns}::{schema.lstrip()}"  # upstream parses first, then adds the namespace
        op = REGISTRY.define(schema, tags)
        self._defs.append(op)
        return op.name

    def _resolve(self, name: str) -> OperatorHandle:
        if "::" not in name:
            name = f"{self.ns}::{name}"
        qual, overload = split_name(name)
        return find_or_throw(qual, overload)

    def impl(self, name: str, dispatch_key, fn, with_keyset: bool = False) -> None:
        op = self._resolve(name)
        key = dispatch_key.name if isinstance(dispatch_key, DispatchKey) else (
            dispatch_key or self.dispatch_key or "CompositeImplicitAutograd")
        if fn is None or _is_fallthrough(fn):
            op.fallthrough.add(key)
        else:
            op.py_kernels[key] = (fn, with_keyset)
        op.forget()
        self._impls.append((op, key))

    def impl_with_aoti_compile(self, ns: str, name: str, dispatch_key) -> None:
        from ..core.refuse import TorchnativeNotImplementedError

        raise TorchnativeNotImplementedError("torch._C._DispatchModule.impl_with_aoti_compile",
                                             "AOTInductor kernels need a native compiler")

    def fallback(self, dispatch_key, fn, with_keyset: bool = False) -> None:
        key = dispatch_key.name if isinstance(dispatch_key, DispatchKey) else str(dispatch_key)
        REGISTRY.fallbacks[(self.ns, key)] = (fn, with_keyset)
        self._fallbacks.append((self.ns, key))

    def reset(self) -> None:
        for op, key in self._impls:
            op.py_kernels.pop(key, None)
            op.fallthrough.discard(key)
            op.forget()
        for op in self._defs:
            REGISTRY._ops.get(op.qualname, {}).pop(op.overload, None)
        for fb in self._fallbacks:
            REGISTRY.fallbacks.pop(fb, None)
        self._impls, self._defs, self._fallbacks = [], [], []


def _is_fallthrough(fn) -> bool:
    return getattr(fn, "__torchnative_fallthrough__", False)


def dispatch_library(kind: str, name: str, dispatch: str = "", file: str = "", linenum: int = 0):
    return DispatchModule(kind, name, dispatch, file, linenum)


@functools.cache
def _fallthrough_kernel():
    def fallthrough(*args, **kwargs):
        raise RuntimeError("a fallthrough kernel is never called")

    fallthrough.__torchnative_fallthrough__ = True
    return fallthrough


class SafeKernelFunction:
    """A handle on the kernel an operator has for a dispatch key at the time it was taken
    (torch.library.get_kernel): a Python kernel registered then, or the built-in one."""

    def __init__(self, op: OperatorHandle, key: str, py_kernel):
        self._op, self._key, self._py = op, key, py_kernel

    @property
    def op_handle(self) -> DispatchOperatorHandle:
        return DispatchOperatorHandle(self._op)

    def call_boxed(self, keyset, *args, **kwargs):
        if self._py is not None:
            fn, with_keyset = self._py
            return fn(keyset, *args, **kwargs) if with_keyset else fn(*args, **kwargs)
        return DOOR["call_builtin_kernel"](self._op, self._key, args, kwargs)

    def __repr__(self):
        where = "python" if self._py is not None else "torchnative"
        return f"SafeKernelFunction(debug='{where} kernel for {self._op.name} at {self._key}')"


def dispatch_get_computed_kernel_for_dispatch_key(name: str, key) -> SafeKernelFunction:
    key = key.name if isinstance(key, DispatchKey) else str(key)
    op = _op_from_name(name)
    if op is None:
        raise RuntimeError(f"Could not find schema for {name}")
    if key in op.py_kernels:
        return SafeKernelFunction(op, key, op.py_kernels[key])
    if not dispatch_has_computed_kernel_for_dispatch_key(name, key):
        raise RuntimeError(f"no kernel for {key} for {name}")
    return SafeKernelFunction(op, key, None)


TORCH_C = {
    "torch._C._dispatch_has_kernel": dispatch_has_kernel,
    "torch._C._dispatch_has_kernel_for_dispatch_key": dispatch_has_kernel_for_dispatch_key,
    "torch._C._dispatch_has_kernel_for_any_dispatch_key": dispatch_has_kernel_for_any_dispatch_key,
    "torch._C._dispatch_has_computed_kernel_for_dispatch_key":
        dispatch_has_computed_kernel_for_dispatch_key,
    "torch._C._dispatch_kernel_for_dispatch_key_is_fallthrough":
        dispatch_kernel_for_dispatch_key_is_fallthrough,
    "torch._C._dispatch_has_backend_fallback": dispatch_has_backend_fallback,
    "torch._C._jit_get_operation": jit_get_operation,
    "torch._C._get_operation_overload": get_operation_overload,
    "torch._C._get_schema": get_schema,
    "torch._C._dispatch_get_all_op_names": dispatch_get_all_op_names,
    "torch._C._dispatch_get_computed_kernel_for_dispatch_key":
        dispatch_get_computed_kernel_for_dispatch_key,
    "torch._C._SafeKernelFunction": SafeKernelFunction,
    "torch._C._DispatchOperatorHandle": DispatchOperatorHandle,
    "torch._C._dispatch_find_schema_or_throw": dispatch_find_schema_or_throw,
    "torch._C._DispatchModule": DispatchModule,
    "torch._C._dispatch_library": dispatch_library,
}
