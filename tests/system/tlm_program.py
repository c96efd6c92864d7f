"""Test-time learning on SmolLM2-135M-Instruct, the same on ours and on upstream (own processes).

    python tlm_program.py OUT.npz [--steps 4] [--lr 1e-3] [--target lora]

Text: Python source shipped with the interpreter (Lib/textwrap.py), a domain the chat model was
not tuned for, cut into sequences of 64 tokens: the first ``steps``×2 stream through TLM online
(batches of 2), the next 4 are held out. Prints JSON: held-out perplexity before, after, and after
revert; whether the reverted logits are bitwise the base's; the delta's bytes vs the model's.
"""

import argparse
import json
import sys
import textwrap as _tw

import numpy as np
import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--target", default="lora")
    ap.add_argument("--dtype", default="float32")
    a = ap.parse_args()
    torch.set_num_threads(1)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from torchnative import adapt
    from torchnative.adapt.tlm import perplexity
    from torchnative.apps.checkpoints import SMOLLM2_GGUF, smollm2_dir

    d = smollm2_dir()
    tok = AutoTokenizer.from_pretrained(d, gguf_file=SMOLLM2_GGUF)
    # eager attention: our SDPA backward with grouped KV heads (SmolLM2: 9 heads, 3 KV) fails
    model = AutoModelForCausalLM.from_pretrained(d, gguf_file=SMOLLM2_GGUF, attn_implementation="eager",
                                                 dtype=getattr(torch, a.dtype)).eval()
    text = open(_tw.__file__).read()
    ids = tok(text, return_tensors="pt").input_ids[0]
    n = 2 * a.steps + 4
    seqs = ids[:n * 64].reshape(n, 64)
    stream, held = seqs[:2 * a.steps], seqs[2 * a.steps:]
    with torch.no_grad():
        base_logits = model(held[:1]).logits.clone()
    before = perplexity(model, held)
    wrapped = adapt.wrap(model, method=adapt.TLM(target=a.target, lr=a.lr))
    out = {}
    for s in range(a.steps):
        logits = wrapped(stream[2 * s:2 * s + 2])
        out[f"step{s}/last_logits"] = logits[:, -1].float().numpy()
        for nme, t in wrapped.delta.current().items():
            out[f"step{s}/{nme}"] = t.float().numpy()
    wrapped.offline()
    after = perplexity(model, held)
    nbytes, selected = wrapped.delta.nbytes, wrapped.delta.state.get("selected", 0)
    wrapped.revert()
    reverted = perplexity(model, held)
    with torch.no_grad():
        rev_logits = model(held[:1]).logits
    model_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    np.savez(a.out, **out)
    print(json.dumps({"ppl_before": before, "ppl_after": after, "ppl_reverted": reverted,
                      "reverted_bitwise": bool(torch.equal(base_logits, rev_logits)),
                      "delta_nbytes": nbytes, "model_bytes": model_bytes, "selected": selected,
                      "updates": wrapped.updates}))


if __name__ == "__main__":
    sys.exit(main())
