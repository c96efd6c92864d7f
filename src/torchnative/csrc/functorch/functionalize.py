"""torch.func.functionalize: upstream's FunctionalTensorWrapper and Functionalize kernels
(aten/src/ATen/FunctionalTensorWrapper.cpp, FunctionalStorageImpl.cpp, the generated
RegisterFunctionalization kernels), for the functorch level of kind "functionalize".

Every tensor inside a functionalize level is a wrapper over a plain ``value``. Wrappers made by a
view share an ``_Alias`` (upstream's FunctionalStorageImpl: the base value and the updates
queued on it) and remember how they were viewed from the base (``_ViewMeta``: the view forward,
and its inverse, which scatters a changed view back into the base). An operator call reaching
the level (the door sends it here, below autograd, as it does a vmap's) runs as:

- a view: the view of the value (or its ``*_copy`` variant when views are not reapplied),
  wrapped over the same alias;
- an in-place operator: its functional variant on the values; the result replaces the
  wrapper's value, is queued on the alias (commit_update) and the wrapper synced;
- anything else: on the values, the tensor results wrapped over fresh aliases.

A wrapper whose alias saw updates since it was last made (its generation is older) is synced
before use: queued updates are applied to the base (through the inverses of each update's views)
and the wrapper's views replayed on it. The inner calls go through the door with
functionalization skipped, so a trace (make_fx) records exactly these operators.
"""

from __future__ import annotations

import threading

from ..core.refuse import TorchnativeNotImplementedError
from ..core.tensor import TensorBase, alias
from ..dispatch.door import aten_dispatch, resolve_composite_implicit
from ..dispatch.call import op as _op
from ..ops.dispatch_keys import autograd_excluded
from ..core.grad_mode import TLS as _GRAD
from . import levels


class _TLS(threading.local):
    def __init__(self):
        self.skip = 0  # inside a functionalization kernel: inner calls are not taken again


TLS = _TLS()


class _Alias:
    """FunctionalStorageImpl: the base value shared by a tensor and its views, and the updates
    (new value, view metas) queued on it; ``generation`` counts updates."""

    __slots__ = ("base", "updates", "generation")

    def __init__(self, base):
        self.base, self.updates, self.generation = base, [], 0

    def apply_updates(self) -> bool:
        any_updates = bool(self.updates)
        for new, metas in self.updates:
            self.base = _apply_update(self.base, new, metas)
        self.updates = []
        return any_updates


class _ViewMeta:
    __slots__ = ("forward", "reverse")

    def __init__(self, forward, reverse):
        self.forward, self.reverse = forward, reverse


class _State:
    __slots__ = ("value", "alias", "metas", "generation", "level")

    def __init__(self, value, alias_, metas, generation, level):
        self.value, self.alias, self.metas = value, alias_, metas
        self.generation, self.level = generation, level


def _apply_update(base, new, metas):
    if not metas:
        return new
    tmp = [base]
    for meta in metas[:-1]:
        tmp.append(meta.forward(tmp[-1]))
    t = new
    for i in range(len(metas) - 1, -1, -1):
        t = metas[i].reverse(tmp[i], t)
    return t


# --- wrappers -----------------------------------------------------------------------------------

def state(t):
    return getattr(t, "_tn_functional", None) if isinstance(t, TensorBase) else None


def _mirror(w, value) -> None:
    """The wrapper presents its value's geometry and memory (upstream mirrors the metadata)."""
    for f in ("_st", "_dtype", "_size", "_stride", "_offset", "_np"):
        setattr(w, f, getattr(value, f))
    w._math_bits = value._math_bits


def wrap(value, level: int, alias_=None, metas=(), generation=0):
    if value._wrapped:
        return value  # wrapped numbers stay as they are (upstream's note on them)
    w = alias(value)
    w._version_ref = value._version_ref
    w._tn_functional = _State(value, alias_ or _Alias(value), list(metas), generation, level)
    return w


def replace(w, value) -> None:
    st = state(w)
    st.value = value
    _mirror(w, value)


def commit_update(w) -> None:
    st = state(w)
    st.alias.updates.append((st.value, list(st.metas)))
    st.alias.generation += 1


def sync(w) -> None:
    st = state(w)
    if st is None or st.generation == st.alias.generation:
        return
    with skipping():
        st.alias.apply_updates()
        _regenerate(w)


def _regenerate(w) -> None:
    st = state(w)
    t = st.alias.base
    for meta in st.metas:
        t = meta.forward(t)
    replace(w, t)
    st.generation = st.alias.generation


def unwrap_for_exit(w):
    """_unwrap_functional_tensor: pending updates applied, the value handed out."""
    st = state(w)
    with skipping():
        if st.alias.apply_updates():
            _regenerate(w)
    return st.value


def has_data_mutation(w) -> bool:
    return state(w).alias.generation > 0


class skipping:
    def __enter__(self):
        TLS.skip += 1

    def __exit__(self, *exc):
        TLS.skip -= 1
        return False


# --- the kernel the door calls ------------------------------------------------------------------

def _level():
    cur = levels.current()
    return cur if cur is not None and cur.kind == "functionalize" else None


def wants(op, args, kwargs, above_autograd: bool) -> bool:
    if TLS.skip or levels.TLS.functionalize == 0 or _level() is None:
        return False
    if above_autograd:
        if _GRAD.grad_enabled and _any_requires_grad(args, kwargs) and not autograd_excluded():
            return False  # autograd records on the wrappers first
        if resolve_composite_implicit(op) is not None:
            return False  # decomposed first; its parts come back here
    return True


def _any_requires_grad(args, kwargs) -> bool:
    from ..dispatch.door import _any_requires_grad as f

    return f(args, kwargs)


def _map(x, fn):
    if isinstance(x, TensorBase):
        return fn(x)
    if type(x) in (list, tuple):
        return type(x)(_map(v, fn) for v in x)
    return x


def _unwrap_arg(t):
    if state(t) is not None:
        sync(t)
        return state(t).value
    return t


def dispatch(op, args, kwargs, above_autograd: bool):
    level = _level()
    schema = op.schema
    name = _short(op)
    writes = [i for i, a in enumerate(schema.arguments) if a.alias_info is not None
              and a.alias_info.is_write]
    with skipping():
        uargs = tuple(_map(a, _unwrap_arg) for a in args)
        ukwargs = {k: _map(v, _unwrap_arg) for k, v in kwargs.items()}
    if writes:
        return _inplace(op, name, writes, args, uargs, ukwargs, level)
    if name == "lift_fresh.default" and state(args[0]) is None:
        # lift_fresh_functionalize: a fresh plain tensor becomes a functional one of its own
        with skipping():
            out = aten_dispatch(op, uargs, ukwargs)
        return wrap(out, level.number)
    if name == "lift_fresh.default":
        return dispatch(_op("view_as"), (args[0], args[0]), {}, above_autograd)
    if _is_view(schema):
        return _view(op, name, args, uargs, ukwargs, level)
    with skipping():
        out = aten_dispatch(op, uargs, ukwargs)
    return _map(out, lambda t: wrap(t, level.number))


def _short(op) -> str:
    base = op.qualname.split("::", 1)[1] if op.qualname.startswith("aten::") else op.qualname
    return f"{base}.{op.overload or 'default'}"


def _is_view(schema) -> bool:
    return any(r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)


def _inplace(op, name, writes, args, uargs, ukwargs, level):
    base, _, overload = name.partition(".")
    if writes != [0] or not base.endswith("_") or state(args[0]) is None:
        raise TorchnativeNotImplementedError(
            f"functionalize: {op.qualname}.{overload}",
            "only in-place operators that write their first argument are functionalized "
            "(out= variants and multiple written arguments are not)")
    functional = _find(base[:-1], overload)
    if functional is None:
        raise TorchnativeNotImplementedError(
            f"functionalize: {op.qualname}.{overload}", "no functional variant to rewrite it to")
    with skipping():
        out = aten_dispatch(functional, uargs, ukwargs)
    w = args[0]
    replace(w, out)
    commit_update(w)
    sync(w)
    return w


def _find(name, overload):
    try:
        return _op(f"{name}.{overload}" if overload != "default" else name)
    except RuntimeError:
        return None


def _view(op, name, args, uargs, ukwargs, level):
    self = args[0]
    st = state(self)
    reapply = level.info.get("reapply_views", True)
    rest, krest = uargs[1:], ukwargs
    inverse = _INVERSES.get(name)
    if inverse is None:
        raise TorchnativeNotImplementedError(f"functionalize: view {op.qualname}",
                                             "no inverse for this view in torchnative")
    fwd_op = op if reapply else _copy_variant(op, name)

    def forward(base):
        return aten_dispatch(fwd_op, (base, *rest), krest)

    def reverse(base, mutated):
        return inverse(base, mutated, rest, krest, reapply)

    meta = _ViewMeta(forward, reverse)
    with skipping():
        value = forward(uargs[0])
    if st is None:
        return wrap(value, level.number)
    # a new view starts at generation 0 (upstream's view constructor does not copy the base's):
    # if its alias has seen updates it is regenerated on first use
    return wrap(value, level.number, st.alias, [*st.metas, meta], 0)


def _copy_variant(op, name):
    base, _, overload = name.partition(".")
    found = _find(f"{base}_copy", overload)
    if found is None:
        raise TorchnativeNotImplementedError(f"functionalize: {base}_copy.{overload}",
                                             "no view_copy variant")
    return found


def _call(name, *args):
    return aten_dispatch(_op(name), args, {})


def _view_or_copy(view_name, copy_name, reapply, *args):
    return _call(view_name if reapply else copy_name, *args)


# FunctionalInverses.cpp: each view's inverse, given the base it was taken from and the changed
# view, returns the changed base (views re-applied as views when views are reapplied)
_INVERSES = {
    "view.default": lambda b, m, a, k, r: _view_or_copy("view", "view_copy", r, m,
                                                        list(b.shape)),
    "_unsafe_view.default": lambda b, m, a, k, r: _view_or_copy("view", "view_copy", r, m,
                                                                list(b.shape)),
    "_reshape_alias.default": lambda b, m, a, k, r: _view_or_copy("view", "view_copy", r, m,
                                                                  list(b.shape)),
    "t.default": lambda b, m, a, k, r: _view_or_copy("t", "t_copy", r, m),
    "transpose.int": lambda b, m, a, k, r: _view_or_copy("transpose.int", "transpose_copy.int",
                                                         r, m, *a),
    "permute.default": lambda b, m, a, k, r: _view_or_copy(
        "permute", "permute_copy", r, m, _inverse_permutation(a[0], b.dim())),
    "select.int": lambda b, m, a, k, r: _call("select_scatter", b, m, *a),
    "slice.Tensor": lambda b, m, a, k, r: _call("slice_scatter", b, m, *a),
    "diagonal.default": lambda b, m, a, k, r: _call("diagonal_scatter", b, m, *a),
    "as_strided.default": lambda b, m, a, k, r: _call("as_strided_scatter", b, m, *a),
    "unsqueeze.default": lambda b, m, a, k, r: _view_or_copy("squeeze.dim", "squeeze_copy.dim",
                                                             r, m, *a),
    "alias.default": lambda b, m, a, k, r: _view_or_copy("alias", "alias_copy", r, m),
}


def _inverse_permutation(dims, n):
    dims = [d % n for d in dims]
    inv = [0] * n
    for i, d in enumerate(dims):
        inv[d] = i
    return inv
