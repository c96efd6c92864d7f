"""Low-rank (LoRA-shaped) deltas, and conversion to and from peft adapters.

``attach(model, targets, r, alpha)`` gives each targeted ``nn.Linear`` two factors, ``lora_A``
(r × in) and ``lora_B`` (out × r), both zero, and a forward hook adding
``linear(linear(x, A), B) · alpha / r`` to its output — peft's LoRA forward, in its order. A delta
over the factors then costs r·(in + out) values per layer, and reverting it (factors back to
zero) gives the base layer's output bit for bit. ``from_peft`` reads a peft adapter directory
(adapter_config.json + adapter_model.safetensors) into such a delta; ``to_peft`` writes one that
peft's ``PeftModel.from_pretrained`` loads.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

from .delta import SessionDelta
from .select import MissingLayer

PEFT_PREFIX = "base_model.model."


def _hook(m, args, out):
    a, b = m.lora_A, m.lora_B
    return out + F.linear(F.linear(args[0], a), b) * m.lora_scaling


def targets_of(model: nn.Module, targets) -> list[str]:
    names = [n for n, m in model.named_modules() if isinstance(m, nn.Linear)
             and n.rpartition(".")[2] in set(targets)]
    if not names:
        raise MissingLayer(f"no nn.Linear named {sorted(targets)} in {type(model).__name__}")
    return names


def attach(model: nn.Module, targets, r: int, alpha: float) -> list[str]:
    """Zero factors on every targeted Linear; returns the factor names (what a delta covers)."""
    if r < 1:
        raise ValueError(f"LoRA rank must be at least 1, got {r}")
    out = []
    for n in targets_of(model, targets):
        m = model.get_submodule(n)
        if hasattr(m, "lora_A"):
            raise ValueError(f"{n} already has LoRA factors")
        dt = m.weight.dtype
        m.lora_A = nn.Parameter(torch.zeros(r, m.in_features, dtype=dt))
        m.lora_B = nn.Parameter(torch.zeros(m.out_features, r, dtype=dt))
        m.lora_scaling = alpha / r
        m._lora_handle = m.register_forward_hook(_hook)
        out += [f"{n}.lora_A", f"{n}.lora_B"]
    return out


def detach(model: nn.Module) -> None:
    for m in model.modules():
        if hasattr(m, "_lora_handle"):
            m._lora_handle.remove()
            del m._lora_handle, m.lora_A, m.lora_B, m.lora_scaling


def from_peft(model: nn.Module, adapter_dir, delta_type=SessionDelta, parent=None, **kw):
    """A peft LoRA adapter as a delta over freshly attached factors (the model is untouched
    until the adapter has been read and checked)."""
    from safetensors.torch import load_file

    adapter_dir = Path(adapter_dir)
    cfg = json.loads((adapter_dir / "adapter_config.json").read_text())
    if cfg.get("peft_type") != "LORA":
        raise ValueError(f"{adapter_dir} is a {cfg.get('peft_type')!r} adapter, not LORA")
    for key in ("use_rslora", "use_dora"):
        if cfg.get(key):
            raise NotImplementedError(f"peft LoRA with {key}=True is not supported by this converter")
    r, alpha = int(cfg["r"]), float(cfg["lora_alpha"])
    tensors = load_file(str(adapter_dir / "adapter_model.safetensors"))
    wanted = {}
    for k, v in tensors.items():
        if not k.startswith(PEFT_PREFIX) or not k.endswith((".lora_A.weight", ".lora_B.weight")):
            raise ValueError(f"{adapter_dir}: unexpected tensor {k!r} in a LoRA adapter")
        path, _, kind = k[len(PEFT_PREFIX):-len(".weight")].rpartition(".")
        wanted[f"{path}.{kind}"] = v
    layers = sorted({n.rpartition(".")[0] for n in wanted})
    for layer in layers:
        m = model.get_submodule(layer)
        if not isinstance(m, nn.Linear):
            raise ValueError(f"{adapter_dir}: {layer} is not an nn.Linear in this model")
        for kind, shape in (("lora_A", (r, m.in_features)), ("lora_B", (m.out_features, r))):
            got = tuple(wanted[f"{layer}.{kind}"].shape)
            if got != shape:
                raise ValueError(f"{adapter_dir}: {layer}.{kind} is {got}, the model needs {shape}")
    names = attach(model, {l.rpartition(".")[2] for l in layers}, r, alpha)
    extra = set(names) - set(wanted)
    if extra:
        detach(model)
        raise ValueError(f"{adapter_dir}: no factors for {sorted(extra)[:3]}")
    d = delta_type(model, names, parent=parent, **kw)
    d._write({n: wanted[n].to(d._get(n).dtype) for n in names})
    return d


def to_peft(delta, out_dir, base_model_name_or_path: str = "") -> None:
    """Write the delta's current factors as a peft LoRA adapter directory."""
    from safetensors.torch import save_file

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    layers = sorted({n.rpartition(".")[0] for n in delta.names if n.endswith((".lora_A", ".lora_B"))})
    if not layers or len(layers) * 2 != len(delta.names):
        raise ValueError("to_peft needs a delta over LoRA factors only (lora_A/lora_B pairs)")
    m0 = delta.model.get_submodule(layers[0])
    r = m0.lora_A.shape[0]
    tensors = {}
    for layer in layers:
        for kind in ("lora_A", "lora_B"):
            tensors[f"{PEFT_PREFIX}{layer}.{kind}.weight"] = delta._get(f"{layer}.{kind}").detach().contiguous().clone()
    save_file(tensors, str(out_dir / "adapter_model.safetensors"), metadata={"format": "pt"})
    cfg = {"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": r,
           "lora_alpha": m0.lora_scaling * r, "lora_dropout": 0.0, "bias": "none",
           "target_modules": sorted({l.rpartition(".")[2] for l in layers}),
           "base_model_name_or_path": base_model_name_or_path, "fan_in_fan_out": False,
           "inference_mode": True, "use_rslora": False, "use_dora": False,
           "init_lora_weights": True, "modules_to_save": None}
    (out_dir / "adapter_config.json").write_text(json.dumps(cfg, indent=2))
