"""One side of the per-kernel golden comparison, run in its own process.

    python hub_kernels_golden_worker.py reference INPUTS.npz OUT.npz
    python hub_kernels_golden_worker.py kernel INPUTS.npz OUT.npz WRONG_OUT.npz

``reference`` (upstream torch) runs the unfused layers transformers ships — ``LlamaRMSNorm``,
``apply_rotary_pos_emb``, ``ACT2FN["silu"]``, Llama's ``act(gate) * up`` and
``sdpa_attention_forward`` — in each case's dtype ("low") and again with every input widened
to float64 ("high"). ``LlamaRMSNorm`` narrows any input to float32 inside, so rerunning it in
float64 measures nothing; its "high" is the same formula (``x.pow(2).mean(-1)``, ``rsqrt``,
weight times the normalized states) evaluated in float64, for every dtype including float64.
float64 attention has nothing wider; the same sdpa call on upstream's math backend is recorded
beside its default one ("again"), so upstream's disagreement with itself is known.
``kernel`` (our torch) runs the torchnative-cpu kernel layers on the same inputs, then
deliberately wrong variants of them (eps off, rotation reversed, half precision, gate and up
swapped, scale off), which the comparison must reject. Every run records the
forward output and the gradients of ``sum(out * grad_out)`` with respect to each floating input;
attention's output is recorded a second time from a call under ``no_grad`` ("inference0").
Inputs are stored as float64 and cast here, so both sides start from identical values.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

SRC = Path(__file__).resolve().parents[2] / "src"
REPO = SRC / "torchnative" / "kernels" / "repos" / "torchnative-cpu"


class _Attn(torch.nn.Module):
    """The attributes transformers' attention functions read from the attention module."""

    def __init__(self, groups: int):
        super().__init__()
        self.is_causal, self.num_key_value_groups, self.training = True, groups, False


def _mask4d(q, k, extra):
    """The boolean (batch, 1, queries, keys) mask transformers' sdpa mask function builds:
    causal, aligned to the last key, and the padding mask."""
    if "key_mask" not in extra:
        return None
    lq, lk = q.shape[2], k.shape[2]
    causal = torch.ones(lq, lk, dtype=torch.bool).tril(lk - lq)
    return causal[None, None] & torch.tensor(extra["key_mask"], dtype=torch.bool)[:, None, None, :]


def _reference(case: str, args: dict, extra: dict, tag: str):
    from transformers.activations import ACT2FN
    from transformers.integrations.sdpa_attention import sdpa_attention_forward
    from transformers.models.llama.modeling_llama import LlamaRMSNorm, apply_rotary_pos_emb

    high = tag == "high"

    if case == "rms_norm" and high:
        x = args["x"]
        return args["weight"] * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + extra["eps"]))
    if case == "rms_norm":
        n = LlamaRMSNorm(args["x"].shape[-1], eps=extra["eps"]).to(args["weight"].dtype)
        with torch.no_grad():
            n.weight.copy_(args["weight"])
        # the parameter is the one gradient leaf of the weight
        n.weight.requires_grad_(True)
        args["weight"] = n.weight
        return n(args["x"])
    if case == "rotary":
        return apply_rotary_pos_emb(args["q"], args["k"], args["cos"], args["sin"])
    if case == "silu":
        return ACT2FN["silu"](args["x"])
    if case == "silu_and_mul":
        d = args["x"].shape[-1] // 2
        return ACT2FN["silu"](args["x"][..., :d]) * args["x"][..., d:]
    if case == "attention":
        q, k, v = args["q"], args["k"], args["v"]
        module = _Attn(q.shape[1] // k.shape[1])
        mask = _mask4d(q, k, extra)
        if tag == "again":     # the same call on upstream's other backend (math, not flash)
            from torch.nn.attention import SDPBackend, sdpa_kernel
            with sdpa_kernel(SDPBackend.MATH):
                return sdpa_attention_forward(module, q, k, v, mask, scaling=extra["scaling"])[0]
        return sdpa_attention_forward(module, q, k, v, mask, scaling=extra["scaling"])[0]
    raise ValueError(case)


def _kernel(case: str, args: dict, extra: dict, wrong: bool):
    from torchnative.kernels import get_local_kernel

    layers = get_local_kernel(REPO).layers
    if case == "rms_norm":
        n = layers.RMSNorm()
        n.weight = args["weight"]
        n.variance_epsilon = extra["eps"] * (100.0 if wrong else 1.0)
        return n(args["x"])
    if case == "rotary":
        sin = -args["sin"] if wrong else args["sin"]
        return layers.RotaryPosEmb()(args["q"], args["k"], args["cos"], sin)
    if case == "silu":
        x = args["x"]
        if wrong:   # computed in half precision
            return layers.SiLU()(x.to(torch.float16)).to(x.dtype)
        return layers.SiLU()(x)
    if case == "silu_and_mul":
        x = args["x"]
        if wrong:   # gate and up swapped
            d = x.shape[-1] // 2
            x = torch.cat((x[..., d:], x[..., :d]), -1)
        return layers.SiluAndMul()(x)
    if case == "attention":
        q, k, v = args["q"], args["k"], args["v"]
        module = _Attn(q.shape[1] // k.shape[1])
        mask = torch.tensor(extra["key_mask"]) if "key_mask" in extra else None
        if extra.get("mask4d"):
            mask = _mask4d(q, k, extra)
        scaling = (q.shape[-1] + 1) ** -0.5 if wrong else extra["scaling"]
        return layers.attention(module, q, k, v, mask, scaling=scaling)[0]
    raise ValueError(case)


def run(side: str, inputs: dict, spec: list) -> dict:
    out = {}
    for item in spec:
        key, case, extra = item["key"], item["case"], item["extra"]
        runs = [("low", item["dtype"])]
        if side == "reference" and (item["dtype"] != "float64" or case == "rms_norm"):
            runs.append(("high", "float64"))
        elif side == "reference" and case == "attention":
            runs.append(("again", "float64"))
        for tag, width in runs:
            dtype = getattr(torch, width)
            args = {name: torch.from_numpy(inputs[f"{key}/{name}"]).to(dtype).requires_grad_(True)
                    for name in item["inputs"]}
            leaves = args                  # _reference may swap in the module's own parameter
            if side == "reference":
                result = _reference(case, args, extra, tag)
            else:
                result = _kernel(case, args, extra, side == "wrong")
            outs = result if isinstance(result, tuple) else (result,)
            loss = sum((o * torch.from_numpy(inputs[f"{key}/grad{i}"]).to(o.dtype)).sum()
                       for i, o in enumerate(outs))
            names = list(item["inputs"])
            grads = torch.autograd.grad(loss, [leaves[n] for n in names])
            for i, o in enumerate(outs):
                out[f"{key}/{tag}/out{i}"] = o.detach().to(torch.float64).numpy()
                if tag == "low":
                    out[f"{key}/dtype/out{i}"] = np.array(str(o.dtype).removeprefix("torch."))
            for n, g in zip(names, grads):
                out[f"{key}/{tag}/d_{n}"] = g.to(torch.float64).numpy()
            if case == "attention":   # with no gradient to record (a prefill takes torch's sdpa)
                with torch.no_grad():
                    result = (_reference(case, args, extra, tag) if side == "reference" else
                              _kernel(case, args, extra, side == "wrong"))
                out[f"{key}/{tag}/inference0"] = result.to(torch.float64).numpy()
    return out


def main() -> None:
    side, src, dst = sys.argv[1], sys.argv[2], sys.argv[3]
    with np.load(src) as z:
        inputs = {k: z[k] for k in z.files}
    spec = json.loads(str(inputs.pop("spec")))
    if side == "reference":
        np.savez(dst, **run("reference", inputs, spec))
        return
    sys.path.insert(0, str(SRC))
    np.savez(dst, **run("kernel", inputs, spec))
    np.savez(sys.argv[4], **run("wrong", inputs, spec))


if __name__ == "__main__":
    main()
