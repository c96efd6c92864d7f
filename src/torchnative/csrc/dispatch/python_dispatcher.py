"""The Python dispatcher: ``torch._C._EnablePythonDispatcher`` / ``_DisablePythonDispatcher``.

Upstream's PythonDispatcher key, when enabled, hands every operator call to the OpOverload's
Python dispatch table first, so kernels upstream's Python registers with ``py_impl`` take effect:
decompositions at CompositeImplicitAutograd or Autograd (dropout, native_batch_norm, the
upsample family ...) run before autograd and before Python dispatch modes see the call. make_fx,
ShapeProp's fake mode and aot_autograd turn it on, and their graphs show those decompositions.

Here the door asks ``above_autograd`` while it is enabled; the choice of key follows upstream's
``resolve_key`` for the autograd key a dense CPU tensor carries (AutogradCPU, then
CompositeImplicitAutograd where the operator has no backend kernel, then the Autograd alias).
Python kernels at lower keys (Meta) the door already consults.
"""

from __future__ import annotations

from ..core.enums import DispatchKey
from ..ops.dispatch_keys import TLS as _KEYS, DispatchKeySet


# guards entered and not yet left, in any thread: the door's cheap test before the TLS one
ACTIVE = [0]


def enabled() -> bool:
    return ACTIVE[0] > 0 and _KEYS.included.has(DispatchKey.PythonDispatcher)


_BACKEND = ("CPU", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")


def above_autograd(op, overload):
    """The Python kernel upstream's Python dispatcher would run for ``op`` at the autograd key,
    or None (then the call proceeds as without the Python dispatcher)."""
    pk = overload.py_kernels
    if not pk:
        return None
    k = pk.get(DispatchKey.AutogradCPU)
    if k is not None:
        return k
    has_cia = "CompositeImplicitAutograd" in op.static_keys or \
        DispatchKey.CompositeImplicitAutograd in pk
    if has_cia and not any(b in op.static_keys for b in _BACKEND):
        return pk.get(DispatchKey.CompositeImplicitAutograd)
    return pk.get(DispatchKey.Autograd)


class _Guard:
    """Upstream's guards include (or exclude) the PythonDispatcher key in the thread's local
    include set, where ``_dispatch_tls_is_dispatch_key_included`` reads it."""

    _value = True

    def __init__(self):
        self._prev = None

    def __enter__(self):
        self._prev = _KEYS.included
        key = DispatchKeySet(DispatchKey.PythonDispatcher)
        _KEYS.included = self._prev | key if self._value else self._prev - key
        ACTIVE[0] += 1
        return self

    def __exit__(self, *exc):
        _KEYS.included = self._prev
        ACTIVE[0] -= 1
        return False


class EnablePythonDispatcher(_Guard):
    _value = True


class DisablePythonDispatcher(_Guard):
    _value = False


EnablePythonDispatcher.__name__ = EnablePythonDispatcher.__qualname__ = "_EnablePythonDispatcher"
DisablePythonDispatcher.__name__ = DisablePythonDispatcher.__qualname__ = "_DisablePythonDispatcher"
EnablePythonDispatcher.__module__ = DisablePythonDispatcher.__module__ = "torch._C"

TORCH_C = {
    "torch._C._EnablePythonDispatcher": EnablePythonDispatcher,
    "torch._C._DisablePythonDispatcher": DisablePythonDispatcher,
}
