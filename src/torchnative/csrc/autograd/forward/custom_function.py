"""Forward AD through a custom ``torch.autograd.Function`` (upstream's _process_forward_mode_AD,
custom_function.cpp): when an input carries a tangent, the Function's ``jvp`` (reached through
its context's ``apply_jvp``) gives one tangent per output."""

from __future__ import annotations

from ...core.grad_mode import TLS as _GRAD
from ...core.tensor import TensorBase
from . import levels


def forward_mode(ctx, args, outputs, dirty_ids) -> None:
    if not levels.active() or not _GRAD.fw_grad:
        return
    # the innermost level with a tangent (the Function's forward ran with forward AD off, so
    # nested levels outside it see its outputs as constants)
    level = levels.top_level([a for a in args if isinstance(a, TensorBase)])
    if level < 0:
        return
    tangents = [levels.fw_grad(a, level) if isinstance(a, TensorBase) else None for a in args]
    outs = outputs if isinstance(outputs, tuple) else (outputs,)
    _GRAD.fw_grad = False  # the user's jvp sees no tangents (its inputs are the duals)
    try:
        grads = ctx.apply_jvp(*tangents)
    finally:
        _GRAD.fw_grad = True
    if not isinstance(grads, tuple):
        grads = (grads,)
    if len(grads) != len(outs):
        raise RuntimeError(f"Function {type(ctx).__name__.removesuffix('Backward')} returned an "
                           f"invalid number of forward gradients (expected {len(outs)} but got "
                           f"{len(grads)})")
    inputs = {id(a): t for a, t in zip(args, tangents) if isinstance(a, TensorBase)}
    for o, g in zip(outs, grads):
        if not isinstance(o, TensorBase) or g is None:
            continue
        if id(o) in dirty_ids:
            if inputs.get(id(o)) is not None and g is not inputs[id(o)]:
                raise RuntimeError("An inplace custom Function is not modifying the forward mode "
                                   "gradients inplace. If the forward is modifying an input "
                                   "inplace, then the jvp function must modify the "
                                   "corresponding gradient inplace.")
            levels.set_fw_grad(o, g, level, True)
        else:
            levels.mark_not_forward_view(o, level)  # an input returned as-is: its own tangent
            levels.set_fw_grad(o, g, level, False)
