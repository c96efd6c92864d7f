"""``torchnative embed``: sentence embeddings with all-MiniLM-L6-v2 through real transformers.

Mean pooling over the attention mask, then L2 normalisation — the model card's recipe — and the
cosine similarity of every pair of sentences.
"""

from __future__ import annotations

from pathlib import Path

from .chat import UsageError

DEFAULT_SENTENCES = [
    "The cat sits on the mat.",
    "A cat is sitting on a rug.",
    "The stock market fell sharply today.",
]


def embed(sentences: list[str], model_dir: Path | None = None):
    import torch
    from transformers import AutoModel, AutoTokenizer

    from .checkpoints import minilm_dir

    if not sentences or any(not s.strip() for s in sentences):
        raise UsageError("give at least one non-empty sentence")
    model_dir = Path(model_dir) if model_dir is not None else minilm_dir()
    if not model_dir.is_dir():
        raise UsageError(f"model directory not found: {model_dir}")
    tok = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModel.from_pretrained(model_dir)
    model.eval()
    batch = tok(sentences, padding=True, truncation=True, return_tensors="pt")
    with torch.inference_mode():
        hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        emb = torch.nn.functional.normalize(pooled, p=2, dim=1)
        sims = emb @ emb.T
    return emb, sims
