"""Every kernel the door resolved, timed exclusively: a kernel that calls other operators does
not count their time. Used by the profiles of a decode step and of a prefill."""

from __future__ import annotations

import collections
import contextlib
import time


@contextlib.contextmanager
def kernels_timed(name=lambda impl: impl.name):
    """Yields (exclusive CPU seconds, calls), both keyed by ``name(impl)``, filled by the calls
    made inside the block; the kernels are restored on leaving it."""
    from torchnative.csrc.dispatch import door

    excl, calls, stack = collections.Counter(), collections.Counter(), []
    clock = time.process_time

    def timed(impl):
        fn, key = impl.fn, name(impl)

        def run(*a, **k):
            t = clock()
            stack.append(0.0)
            try:
                return fn(*a, **k)
            finally:
                dt = clock() - t
                inner = stack.pop()
                excl[key] += dt - inner
                calls[key] += 1
                if stack:
                    stack[-1] += dt
        return run

    originals = [(impl, impl.fn) for impl in list(door._IMPLS)]
    for impl, _ in originals:
        impl.fn = timed(impl)
    try:
        yield excl, calls
    finally:
        for impl, fn in originals:
            impl.fn = fn
