"""peft LoRA adapters <-> torchnative.delta, run on either torch (each in its own process).

    make DIR    (upstream) a tiny Llama saved with save_pretrained, a peft LoRA adapter trained 3
                steps on it and saved; the peft model's logits (float32, and float64 from the same
                files) in DIR/peft_logits.npz
    ours DIR    (ours) the adapter loaded as a delta: logits; then a delta trained on ours, saved
                with to_peft to DIR/ours_adapter; its logits; the reverted model's logits
    load DIR    (upstream) peft loads DIR/ours_adapter: logits (float32, float64)
"""

import json
import sys
from pathlib import Path

import numpy as np
import torch

IDS = torch.tensor([[1, 5, 9, 2, 7, 3, 11, 4], [6, 2, 8, 14, 3, 1, 0, 12]])


def tiny(d: Path):
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=16, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=32)
    LlamaForCausalLM(cfg).save_pretrained(d / "base")


def base(d: Path, dtype=torch.float32):
    from transformers import LlamaForCausalLM
    # eager attention: our SDPA backward with grouped KV heads fails (reported); the conversion,
    # not the attention kernel, is under test here
    return LlamaForCausalLM.from_pretrained(d / "base", dtype=dtype, attn_implementation="eager").eval()


def lm_loss(model):
    out = model(IDS).logits
    return torch.nn.functional.cross_entropy(out[:, :-1].reshape(-1, 16), IDS[:, 1:].reshape(-1))


def make(d: Path):
    from peft import LoraConfig, PeftModel, get_peft_model
    tiny(d)
    torch.manual_seed(1)
    pm = get_peft_model(base(d), LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                            lora_dropout=0.0))
    opt = torch.optim.Adam([p for p in pm.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(3):
        lm_loss(pm).backward()
        opt.step()
        opt.zero_grad()
    pm.save_pretrained(d / "peft_adapter")
    out = {}
    for name, dt in (("f32", torch.float32), ("f64", torch.float64)):
        m = PeftModel.from_pretrained(base(d, dt), d / "peft_adapter").eval()
        with torch.no_grad():
            out[name] = m(IDS).logits.numpy()
    with torch.no_grad():
        out["base"] = base(d)(IDS).logits.numpy()
    np.savez(d / "peft_logits.npz", **out)


def ours(d: Path):
    from torchnative.delta import lora
    m = base(d)
    with torch.no_grad():
        before = m(IDS).logits.clone()
    delta = lora.from_peft(m, d / "peft_adapter")
    with torch.no_grad():
        loaded = m(IDS).logits.numpy()
    delta.revert()
    with torch.no_grad():
        reverted = m(IDS).logits
    # now a delta trained on ours, written for peft
    torch.manual_seed(2)
    with torch.no_grad():
        for n in delta.names:
            if n.endswith("lora_A"):
                delta._get(n).normal_(0, 0.1)
    m.requires_grad_(False)
    params = [delta._get(n).requires_grad_(True) for n in delta.names]
    opt = torch.optim.Adam(params, lr=1e-2)
    for _ in range(3):
        lm_loss(m).backward()
        opt.step()
        opt.zero_grad()
    lora.to_peft(delta, d / "ours_adapter")
    with torch.no_grad():
        trained = m(IDS).logits.numpy()
    np.savez(d / "ours_logits.npz", loaded=loaded, trained=trained)
    print(json.dumps({"revert_bitwise": bool(torch.equal(before, reverted)),
                      "names": list(delta.names), "nbytes": delta.nbytes,
                      "model_bytes": sum(p.numel() * p.element_size() for p in m.parameters())}))


def load(d: Path):
    from peft import PeftModel
    out = {}
    for name, dt in (("f32", torch.float32), ("f64", torch.float64)):
        m = PeftModel.from_pretrained(base(d, dt), d / "ours_adapter").eval()
        with torch.no_grad():
            out[name] = m(IDS).logits.numpy()
    np.savez(d / "peft_loaded_ours.npz", **out)


if __name__ == "__main__":
    {"make": make, "ours": ours, "load": load}[sys.argv[1]](Path(sys.argv[2]))
