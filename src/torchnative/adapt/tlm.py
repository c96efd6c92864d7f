"""Test-time learning for language models (TLM, Hu et al., ICML 2025): minimise the perplexity
of the test input itself, on a LoRA delta (q_proj, v_proj; rank 8, alpha 16) or on the RMSNorm
weights, with TLM's sample-efficient weighting: a sequence whose log-perplexity (mean token
cross-entropy) P exceeds P0 = 3 is weighted λ·exp(P − P0) (λ 0.1, detached), the others 0.

Input: token ids (B, T) — a real transformers causal LM (e.g. SmolLM2-135M-Instruct). The
prediction returned is the logits of the forward the update was computed from.
"""

from __future__ import annotations

import math

import torch

from ..delta import lora, select
from .method import Method
from . import check


def token_ce(logits: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy per sequence (B,)."""
    lp = logits[:, :-1].float().log_softmax(-1)
    nll = -lp.gather(-1, ids[:, 1:, None])[..., 0]
    return nll.mean(1)


def perplexity(model, ids: torch.Tensor, chunk: int = 4) -> float:
    """exp of the mean next-token cross-entropy over all sequences of ``ids`` (B, T)."""
    ces = []
    with torch.no_grad():
        for i in range(0, ids.shape[0], chunk):
            ces.append(token_ce(model(ids[i:i + chunk]).logits, ids[i:i + chunk]))
    return math.exp(float(torch.cat(ces).mean()))


class TLM(Method):
    name = "tlm"
    needs_backward = True

    def __init__(self, target: str = "lora", lr: float = 5e-5, r: int = 8, alpha: float = 16,
                 modules=("q_proj", "v_proj"), p0: float = 3.0, lam: float = 0.1,
                 sign: float = 1.0, seed: int = 0):
        if target not in ("lora", "norm"):
            raise ValueError(f"TLM target must be 'lora' or 'norm', got {target!r}")
        self.target, self.lr = target, check.real("TLM", "lr", lr)
        self.r, self.alpha = check.integer("TLM", "r", r), check.real("TLM", "alpha", alpha)
        self.modules = tuple(modules)
        self.p0, self.lam = check.real("TLM", "p0", p0), check.real("TLM", "lam", lam)
        self.sign, self.seed = check.sign("TLM", sign), check.integer("TLM", "seed", seed, lo=0)

    @property
    def updates(self):
        return (f"LoRA factors on {', '.join(self.modules)} (rank {self.r})" if self.target == "lora"
                else "RMSNorm/LayerNorm weights")

    def covers(self, model):
        if self.target == "norm":
            return select.require(model, select.norm_affine(model), "TLM", "normalization")
        names = lora.attach(model, self.modules, self.r, self.alpha)
        g = torch.Generator().manual_seed(self.seed)
        with torch.no_grad():  # LoRA's init: A uniform (kaiming, a=√5 as nn.Linear), B zero
            for n in names:
                if n.endswith("lora_A"):
                    a = model.get_submodule(n.rpartition(".")[0]).lora_A
                    bound = 1 / math.sqrt(a.shape[1])
                    a.copy_(torch.rand(a.shape, generator=g, dtype=a.dtype) * 2 * bound - bound)
        return names

    def configure(self, model):
        model.eval()  # no dropout; gradients flow in eval mode all the same
        model.requires_grad_(False)

    def step(self, model, ids, delta):
        opt = delta.state.get("optimizer")
        if opt is None:
            params = [delta._get(n).requires_grad_(True) for n in delta.names]
            opt = delta.state["optimizer"] = torch.optim.AdamW(params, lr=self.lr)
        logits = model(ids).logits
        ce = token_ce(logits, ids)
        w = torch.where(ce > self.p0, self.lam * torch.exp(ce.detach() - self.p0),
                        torch.zeros_like(ce)).detach()
        delta.state["selected"] = delta.state.get("selected", 0) + int((w > 0).sum())
        if (w > 0).any():
            (self.sign * (w * ce).sum() / ids.shape[0]).backward()
            opt.step()
        opt.zero_grad()
        return logits.detach()

    def release(self, model):
        if self.target == "lora":
            lora.detach(model)
