"""Selectors: which parameters and buffers of a model a delta covers, by qualified name.

Norm layers are recognised by type (torch.nn's batch/layer/group/RMS norms) and, for models that
bring their own (transformers' ``LlamaRMSNorm`` and its kin), by a class name ending in ``Norm``
with a ``weight`` parameter: those classes do not share a torch base class.
"""

from __future__ import annotations

import torch.nn as nn

BATCH_NORMS = (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d, nn.SyncBatchNorm)
TORCH_NORMS = BATCH_NORMS + (nn.LayerNorm, nn.GroupNorm, nn.RMSNorm, nn.InstanceNorm1d,
                             nn.InstanceNorm2d, nn.InstanceNorm3d)
BN_STATS = ("running_mean", "running_var", "num_batches_tracked")


class MissingLayer(TypeError):
    """A model lacks the layer type a method or selector needs."""


def is_norm(m: nn.Module) -> bool:
    if isinstance(m, TORCH_NORMS):
        return True
    name = type(m).__name__
    return name.endswith("Norm") and isinstance(getattr(m, "weight", None), nn.Parameter)


def norm_layers(model: nn.Module) -> list[tuple[str, nn.Module]]:
    return [(n, m) for n, m in model.named_modules() if is_norm(m)]


def batch_norms(model: nn.Module) -> list[tuple[str, nn.Module]]:
    return [(n, m) for n, m in model.named_modules() if isinstance(m, BATCH_NORMS)]


def _join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def norm_affine(model: nn.Module) -> list[str]:
    """weight and bias of every normalization layer that has them."""
    out = []
    for n, m in norm_layers(model):
        for p in ("weight", "bias"):
            if isinstance(getattr(m, p, None), nn.Parameter):
                out.append(_join(n, p))
    return out


def bn_stats(model: nn.Module) -> list[str]:
    """running_mean, running_var and num_batches_tracked of every BatchNorm that tracks them."""
    out = []
    for n, m in batch_norms(model):
        for b in BN_STATS:
            if getattr(m, b, None) is not None:
                out.append(_join(n, b))
    return out


def layers(model: nn.Module, *prefixes: str) -> list[str]:
    """every parameter and buffer of the named submodules (whole layers)."""
    out = []
    for pre in prefixes:
        model.get_submodule(pre)  # raises AttributeError naming a missing submodule
        for n, _ in list(model.named_parameters()) + list(model.named_buffers()):
            if n == pre or n.startswith(pre + "."):
                out.append(n)
    return out


def lora(model: nn.Module) -> list[str]:
    """low-rank factors (``lora_A``/``lora_B`` parameters, peft's and our naming)."""
    out = [n for n, _ in model.named_parameters() if ".lora_A." in f".{n}." or ".lora_B." in f".{n}."
           or n.endswith(("lora_A", "lora_B"))]
    if not out:
        raise MissingLayer("the model has no LoRA factors (lora_A/lora_B parameters)")
    return out


def require(model: nn.Module, names: list[str], method: str, layer: str) -> list[str]:
    if not names:
        raise MissingLayer(f"{method} needs a {layer} layer; {type(model).__name__} has none")
    return names
