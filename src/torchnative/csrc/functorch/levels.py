"""The functorch level stack (upstream's DynamicLayer stack), one per thread.

Each active transform (vmap, grad/vjp, and forward-mode jvp) is a ``Level``; its number is the
stack depth after it was pushed (1 for the outermost), as upstream numbers layers. The API
another transform kind uses:

- ``push(kind, **info) -> Level``: a new innermost level of ``kind`` ("vmap", "grad", "jvp",
  ...); ``info`` is kept on the level (vmap: ``batch_size``, ``randomness``).
- ``pop(kind) -> Level``: removes the innermost level, which must be of ``kind``; it is marked
  dead (tensors lifted to it are no longer wrapped by anything alive).
- ``current() -> Level | None``: the innermost level; ``stack()`` all of them, outermost first.
- ``by_number(n) -> Level``: the live level numbered ``n`` (refuses a number not on the stack).
- ``live_vmap``: a one-element list counting live vmap and functionalize levels in all threads;
  the door reads it to decide, at no cost when it is zero, whether a call may belong to the
  functorch layer (``TLS.vmap`` and ``TLS.functionalize`` count this thread's).

Lifting a tensor to a level is the kind's own business (``batched.add_batch_dim`` for vmap,
``grad_levels.wrap_for_grad`` for grad); each records the ``Level`` object it lifted to, so a
level's death can be observed.
"""

from __future__ import annotations

import threading


class Level:
    __slots__ = ("number", "kind", "info", "alive")

    def __init__(self, number: int, kind: str, info: dict):
        self.number, self.kind, self.info, self.alive = number, kind, info, True

    def __repr__(self):
        return f"Level({self.number}, {self.kind!r})"


class _TLS(threading.local):
    def __init__(self):
        self.stack: list[Level] = []
        self.vmap = 0  # live vmap levels in this thread
        self.functionalize = 0  # live functionalize levels in this thread


TLS = _TLS()
live_vmap = [0]


def push(kind: str, **info) -> Level:
    level = Level(len(TLS.stack) + 1, kind, info)
    TLS.stack.append(level)
    if kind == "vmap":
        live_vmap[0] += 1
        TLS.vmap += 1
    elif kind == "functionalize":  # the door sends calls to the functorch layer for it too
        live_vmap[0] += 1
        TLS.functionalize += 1
    return level


def pop(kind: str) -> Level:
    stack = TLS.stack
    if not stack or stack[-1].kind != kind:
        top = stack[-1].kind if stack else "nothing"
        raise RuntimeError(f"functorch: asked to leave a {kind} level but the innermost "
                           f"level is {top}")
    level = stack.pop()
    level.alive = False
    if kind == "vmap":
        live_vmap[0] -= 1
        TLS.vmap -= 1
    elif kind == "functionalize":
        live_vmap[0] -= 1
        TLS.functionalize -= 1
    return level


def current() -> Level | None:
    return TLS.stack[-1] if TLS.stack else None


def stack() -> list:
    return list(TLS.stack)


def by_number(n: int) -> Level:
    stack = TLS.stack
    if 1 <= n <= len(stack):
        return stack[n - 1]
    raise RuntimeError(f"functorch: no live level numbered {n} (depth {len(stack)})")


def depth() -> int:
    return len(TLS.stack)
