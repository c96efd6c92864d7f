"""The functionalization TLS upstream's fake-tensor and meta conversion read on every call.

Functionalization is not implemented (``torch._enable_functionalization`` refuses by name), so
the Functionalize key is never in the thread's include set and its ``reapply_views`` flag keeps
its default; reading it is a true answer, not a placeholder.
"""

from __future__ import annotations


def functionalization_reapply_views_tls() -> bool:
    return False


TORCH_C = {"torch._C._functionalization_reapply_views_tls": functionalization_reapply_views_tls}
