"""Tensors whose sizes are torch.SymInt (FakeTensors of a symbolic make_fx trace).

Upstream's TensorImpl computes a symbolic tensor's numel once, when its sizes are set, outside
any trace; tracers then know that one SymInt (make_fx records ``sym_numel`` for it). Here it is
computed on first use, with proxy tracing suspended so the product is not recorded, and kept.
"""

from __future__ import annotations


def is_symbolic(sizes) -> bool:
    return any(type(s) is not int for s in sizes)


def symbolic_numel(t):
    n = getattr(t, "_tn_sym_numel", None)
    if n is None:
        from torch.fx.experimental.proxy_tensor import disable_proxy_modes_tracing

        n = 1
        with disable_proxy_modes_tracing():
            for s in t._size:
                n = n * s
        t._tn_sym_numel = n
    return n
