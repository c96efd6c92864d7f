"""The Autograd dispatch key: run the operator below autograd, then record it in the graph."""

from __future__ import annotations

from ..refuse import TorchnativeNotImplementedError


def autograd_dispatch(op, args, kwargs):
    raise TorchnativeNotImplementedError(
        f"autograd for {op.name}", "the autograd engine is not implemented yet; run under "
        "torch.no_grad() or torch.inference_mode()")
