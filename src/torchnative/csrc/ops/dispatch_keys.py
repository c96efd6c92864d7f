"""DispatchKeySet as c10 defines it: functionality bits crossed with backend-component bits.

A per-backend runtime key (``CPU``, ``AutogradCUDA``, ``SparseMeta`` ...) is one functionality
(Dense, Autograd, Sparse ...) on one backend; a set holds functionalities and backends separately,
so membership is their cross product, exactly as in c10. Thread-local include/exclude sets live
here too, with the guards upstream Python uses.
"""

from __future__ import annotations

import threading

from ..core.enums import DispatchKey
from ..core.refuse import TorchnativeNotImplementedError
from ..core.tables import c_enums

_FACTS = c_enums()["dispatch"]
RUNTIME_ORDER: list[str] = _FACTS["runtime_order"]
ALIAS_KEYS = frozenset(_FACTS["alias_keys"])

BACKENDS = ["CPU", "CUDA", "HIP", "XLA", "MPS", "IPU", "XPU", "HPU", "VE", "Lazy", "MTIA", "MAIA",
            "PrivateUse1", "PrivateUse2", "PrivateUse3", "Meta"]
# per-backend functionality -> the name prefix of its runtime keys
PER_BACKEND = {"Dense": "", "Quantized": "Quantized", "Sparse": "Sparse",
               "SparseCsr": "SparseCsr", "NestedTensor": "NestedTensor",
               "AutogradFunctionality": "Autograd"}


def _runtime_split() -> dict[str, tuple[str, str | None]]:
    """runtime key name -> (functionality name, backend name or None)."""
    out: dict[str, tuple[str, str | None]] = {}
    for func, prefix in PER_BACKEND.items():
        for b in BACKENDS:
            out[prefix + b] = (func, b)
    for name in RUNTIME_ORDER:
        out.setdefault(name, (name, None))
    return out


SPLIT = _runtime_split()


def _functionality_order() -> list[str]:
    seen: list[str] = []
    for name in RUNTIME_ORDER:
        func = SPLIT[name][0]
        if func not in seen:
            seen.append(func)
    return seen


FUNCTIONALITIES = _functionality_order()  # index + 1 == c10's functionality key value
_FUNC_BIT = {f: len(BACKENDS) + i for i, f in enumerate(FUNCTIONALITIES)}
_BACKEND_BIT = {b: i for i, b in enumerate(BACKENDS)}


def _key_name(key) -> str:
    if isinstance(key, DispatchKey):
        return key.name
    if isinstance(key, str):
        return key
    return DispatchKey(key).name


class DispatchKeySet:
    __slots__ = ("_repr",)

    def __init__(self, key=None):
        self._repr = 0
        if key is None:
            return
        if isinstance(key, DispatchKeySet):
            self._repr = key._repr
            return
        name = _key_name(key)
        if name == "Undefined":
            return
        if name in ALIAS_KEYS:
            return  # upstream: an alias key makes an empty set
        func, backend = SPLIT.get(name, (name, None))
        if func not in _FUNC_BIT:
            if name in BACKENDS:
                func, backend = "Dense", name
            else:
                raise RuntimeError(f"unknown dispatch key {name}")
        self._repr = 1 << _FUNC_BIT[func]
        if backend is not None:
            self._repr |= 1 << _BACKEND_BIT[backend]

    @classmethod
    def from_raw_repr(cls, raw: int) -> "DispatchKeySet":
        ks = cls()
        ks._repr = raw
        return ks

    def raw_repr(self) -> int:
        return self._repr

    def has(self, key) -> bool:
        other = DispatchKeySet(key)._repr
        func_mask = other & ~((1 << len(BACKENDS)) - 1)
        backend_mask = other & ((1 << len(BACKENDS)) - 1)
        return (self._repr & func_mask) == func_mask and (self._repr & backend_mask) == backend_mask

    def _names(self) -> list[str]:
        out = []
        for name in RUNTIME_ORDER:
            func, backend = SPLIT[name]
            if not self._repr >> _FUNC_BIT[func] & 1:
                continue
            if backend is None or self._repr >> _BACKEND_BIT[backend] & 1:
                out.append(name)
        return out

    def highestPriorityTypeId(self) -> DispatchKey:
        names = [n for n in self._names() if n in DispatchKey.__members__]
        return DispatchKey[names[-1]] if names else DispatchKey.Undefined

    def add(self, key) -> "DispatchKeySet":
        return self | DispatchKeySet(key)

    def remove(self, key) -> "DispatchKeySet":
        # c10 removes only the functionality bit; backend bits stay (they may be shared)
        func = SPLIT.get(_key_name(key), (_key_name(key), None))[0]
        return DispatchKeySet.from_raw_repr(self._repr & ~(1 << _FUNC_BIT[func]))

    def __or__(self, other):
        return DispatchKeySet.from_raw_repr(self._repr | DispatchKeySet(other)._repr)

    def __and__(self, other):
        return DispatchKeySet.from_raw_repr(self._repr & DispatchKeySet(other)._repr)

    def __sub__(self, other):
        # c10: removes functionality bits of ``other``, keeps backend bits
        mask = DispatchKeySet(other)._repr & ~((1 << len(BACKENDS)) - 1)
        return DispatchKeySet.from_raw_repr(self._repr & ~mask)

    def __eq__(self, other):
        return isinstance(other, DispatchKeySet) and other._repr == self._repr

    def __hash__(self):
        return hash(self._repr)

    def __bool__(self):
        return self._repr != 0

    def __repr__(self):
        return "DispatchKeySet(" + ", ".join(self._names()) + ")"

    __str__ = __repr__


def keyset_full() -> DispatchKeySet:
    return DispatchKeySet.from_raw_repr((1 << (len(BACKENDS) + len(FUNCTIONALITIES))) - 1)


def keyset_full_after(key) -> DispatchKeySet:
    """All functionalities of strictly lower priority than ``key``, with every backend."""
    func = SPLIT[_key_name(key)][0]
    bits = (1 << _FUNC_BIT[func]) - 1  # functionality bits below, plus all backend bits
    return DispatchKeySet.from_raw_repr(bits)


# --- thread-local include / exclude sets --------------------------------------------------------

class _TLS(threading.local):
    def __init__(self):
        self.included = DispatchKeySet()
        self.excluded = DispatchKeySet()


TLS = _TLS()


_AUTOGRAD_FUNCTIONALITY = 1 << _FUNC_BIT["AutogradFunctionality"]


def autograd_excluded() -> bool:
    """Is autograd's dispatch key in this thread's exclude set (_AutoDispatchBelowAutograd,
    an ExcludeDispatchKeyGuard)? Then calls skip the graph, as upstream's dispatcher does."""
    return bool(TLS.excluded._repr & _AUTOGRAD_FUNCTIONALITY)


def tls_is_dispatch_key_excluded(key) -> bool:
    return TLS.excluded.has(key)


def tls_is_dispatch_key_included(key) -> bool:
    return TLS.included.has(key)


def tls_set_dispatch_key_excluded(key, value: bool) -> None:
    TLS.excluded = TLS.excluded | key if value else TLS.excluded - DispatchKeySet(key)


def pre_dispatch_refused() -> TorchnativeNotImplementedError:
    """The door does not dispatch on the PreDispatch key: a mode pushed there (pre-dispatch
    tracing: ``make_fx(pre_dispatch=True)``, ``torch.export``) would see no call at all."""
    return TorchnativeNotImplementedError(
        "DispatchKey.PreDispatch", "pre-dispatch tracing (make_fx(pre_dispatch=True), "
        "torch.export) needs the PreDispatch dispatch key, which torchnative does not dispatch on")


def tls_set_dispatch_key_included(key, value: bool) -> None:
    if value and key == DispatchKey.PreDispatch:
        raise pre_dispatch_refused()
    TLS.included = TLS.included | key if value else TLS.included - DispatchKeySet(key)


def tls_local_include_set() -> DispatchKeySet:
    return TLS.included


def tls_local_exclude_set() -> DispatchKeySet:
    return TLS.excluded


class _KeyGuard:
    """Base for the RAII guards: set a TLS set on enter, restore it on exit."""

    _which = "excluded"

    def __init__(self, keyset):
        self._keyset = DispatchKeySet(keyset)
        self._saved = None

    def _apply(self, current: DispatchKeySet) -> DispatchKeySet:
        return current | self._keyset

    def __enter__(self):
        self._saved = getattr(TLS, self._which)
        setattr(TLS, self._which, self._apply(self._saved))
        return self

    def __exit__(self, *exc):
        setattr(TLS, self._which, self._saved)
        return False


class ExcludeDispatchKeyGuard(_KeyGuard):
    _which = "excluded"


class IncludeDispatchKeyGuard(_KeyGuard):
    _which = "included"


class SetExcludeDispatchKeyGuard(_KeyGuard):
    _which = "excluded"

    def __init__(self, key, enabled: bool):
        super().__init__(key)
        self._enabled = enabled

    def _apply(self, current):
        return current | self._keyset if self._enabled else current - self._keyset


class ForceDispatchKeyGuard:
    def __init__(self, include=None, exclude=None):
        self._sets = (DispatchKeySet(include), DispatchKeySet(exclude))

    def __enter__(self):
        self._saved = (TLS.included, TLS.excluded)
        TLS.included, TLS.excluded = self._sets
        return self

    def __exit__(self, *exc):
        TLS.included, TLS.excluded = self._saved
        return False


class PreserveDispatchKeyGuard:
    def __enter__(self):
        self._saved = (TLS.included, TLS.excluded)
        return self

    def __exit__(self, *exc):
        TLS.included, TLS.excluded = self._saved
        return False


class AutoDispatchBelowAutograd(_KeyGuard):
    def __init__(self):
        super().__init__(DispatchKey.AutogradFunctionality)
        self._keyset = self._keyset | DispatchKey.AutogradOther | DispatchKey.AutogradNestedTensor


class AutoDispatchBelowADInplaceOrView(AutoDispatchBelowAutograd):
    def __init__(self):
        super().__init__()
        self._keyset = self._keyset | DispatchKey.ADInplaceOrView


def parse_dispatch_key(name: str):
    """``DispatchKey`` for a name, or None (upstream's _parse_dispatch_key)."""
    return DispatchKey.__members__.get(name)


def dispatch_key_parse(name: str) -> DispatchKey:
    try:
        return DispatchKey[name]
    except KeyError:
        raise RuntimeError(f"could not parse dispatch key: {name}") from None


def dispatch_key_name(key) -> str:
    return _key_name(key)


def dispatch_is_alias_key(key) -> bool:
    return _key_name(key) in ALIAS_KEYS


_DEVICE_KEY = {"cpu": "CPU", "cuda": "CUDA", "meta": "Meta", "mps": "MPS", "xpu": "XPU",
               "hip": "HIP", "xla": "XLA", "lazy": "Lazy", "ipu": "IPU", "hpu": "HPU",
               "ve": "VE", "mtia": "MTIA", "maia": "MAIA", "privateuseone": "PrivateUse1"}


def dispatch_key_for_device(device_type: str) -> str:
    try:
        return _DEVICE_KEY[device_type]
    except KeyError:
        raise RuntimeError(f"Unknown device type: {device_type}") from None


def _keyset_of(names) -> DispatchKeySet:
    out = DispatchKeySet()
    for n in names:
        out = out | DispatchKeySet(n)
    return out


# Constant key sets upstream exposes, rebuilt from their members as read off upstream.
CONSTANT_KEYSETS = {f"torch._C.{name}": _keyset_of(names)
                    for name, names in _FACTS["keysets"].items()}

TORCH_C = {
    **CONSTANT_KEYSETS,
    "torch._C.DispatchKeySet": DispatchKeySet,
    "torch._C._dispatch_keyset_full": keyset_full,
    "torch._C._dispatch_keyset_full_after": keyset_full_after,
    "torch._C._dispatch_tls_is_dispatch_key_excluded": tls_is_dispatch_key_excluded,
    "torch._C._dispatch_tls_is_dispatch_key_included": tls_is_dispatch_key_included,
    "torch._C._dispatch_tls_set_dispatch_key_excluded": tls_set_dispatch_key_excluded,
    "torch._C._dispatch_tls_set_dispatch_key_included": tls_set_dispatch_key_included,
    "torch._C._dispatch_tls_local_include_set": tls_local_include_set,
    "torch._C._dispatch_tls_local_exclude_set": tls_local_exclude_set,
    "torch._C._ExcludeDispatchKeyGuard": ExcludeDispatchKeyGuard,
    "torch._C.ExcludeDispatchKeyGuard": ExcludeDispatchKeyGuard,
    "torch._C._IncludeDispatchKeyGuard": IncludeDispatchKeyGuard,
    "torch._C._SetExcludeDispatchKeyGuard": SetExcludeDispatchKeyGuard,
    "torch._C._ForceDispatchKeyGuard": ForceDispatchKeyGuard,
    "torch._C._PreserveDispatchKeyGuard": PreserveDispatchKeyGuard,
    "torch._C._AutoDispatchBelowAutograd": AutoDispatchBelowAutograd,
    "torch._C._AutoDispatchBelowADInplaceOrView": AutoDispatchBelowADInplaceOrView,
    "torch._C._parse_dispatch_key": parse_dispatch_key,
    "torch._C._dispatch_key_parse": dispatch_key_parse,
    "torch._C._dispatch_key_name": dispatch_key_name,
    "torch._C._dispatch_is_alias_key": dispatch_is_alias_key,
    "torch._C._dispatch_key_for_device": dispatch_key_for_device,
}
