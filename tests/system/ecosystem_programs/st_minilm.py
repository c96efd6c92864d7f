"""sentence-transformers: the packaged all-MiniLM-L6-v2 (Transformer, Pooling, Normalize modules
read from its own modules.json; nothing downloaded) encodes and compares sentences, and trains
with the library's own losses in a plain loop (its Trainer needs the ``datasets`` package, which
neither environment has): dropout on, AdamW, one MultipleNegativesRankingLoss step and one
CosineSimilarityLoss step."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from sentence_transformers import SentenceTransformer, util  # noqa: E402
from sentence_transformers.sentence_transformer import losses  # noqa: E402

from torchnative.apps.checkpoints import minilm_dir  # noqa: E402

SENTENCES = ["A man is eating food.", "A man is riding a horse.", "The new movie is awesome.",
             "A woman is playing violin.", "Stock markets fell sharply today.",
             "Someone is eating a piece of bread."]
QUERIES = ["Who is eating?", "Music performance", "financial news"]
PAIRS = [("How do I bake bread?", "A recipe for baking bread at home."),
         ("What is the capital of France?", "Paris is the capital of France."),
         ("Best way to learn Python", "A beginner's guide to Python programming."),
         ("Symptoms of the flu", "Fever, cough and aches are common flu symptoms.")]
SCORED = [("A cat sits on the mat.", "A cat is sitting on a rug.", 0.9),
          ("A cat sits on the mat.", "The stock market crashed.", 0.05),
          ("He plays guitar.", "A man is playing an instrument.", 0.7),
          ("It is raining.", "The weather is sunny and dry.", 0.2)]
WATCHED = ["0.model.embeddings.LayerNorm.weight",
           "0.model.encoder.layer.0.attention.self.query.weight",
           "0.model.encoder.layer.5.output.dense.weight"]


def load(dt):
    return SentenceTransformer(str(minilm_dir()), device="cpu", local_files_only=True).to(dt)


def encode(dt):
    def run():
        m = load(dt)
        emb = m.encode(SENTENCES, convert_to_tensor=True, batch_size=4)
        q = m.encode(QUERIES, convert_to_tensor=True)
        hits = util.semantic_search(q, emb, top_k=2)
        return {"embeddings": emb, "similarity": m.similarity(emb, emb),
                "pairwise": m.similarity_pairwise(emb[:3], emb[3:]),
                "dot": util.dot_score(q, emb),
                "top_ids": torch.tensor([[h["corpus_id"] for h in hs] for hs in hits]),
                "top_scores": torch.tensor([[h["score"] for h in hs] for hs in hits],
                                           dtype=torch.float64)}
    return run


def features(m, texts):
    return m.preprocess(list(texts))


def train(dt, lr=2e-5):
    def run():
        m = load(dt)
        params = dict(m.named_parameters())
        out = {f"initial/{k}": params[k].detach().clone() for k in WATCHED}
        m.train()
        opt = torch.optim.AdamW(m.parameters(), lr=lr)
        mnrl, cos = losses.MultipleNegativesRankingLoss(m), losses.CosineSimilarityLoss(m)
        anchors, positives = zip(*PAIRS)
        a, b, score = zip(*SCORED)
        steps = [(mnrl, [features(m, anchors), features(m, positives)], torch.zeros(len(PAIRS))),
                 (cos, [features(m, a), features(m, b)], torch.tensor(score, dtype=dt))]
        found = []
        for loss_fn, feats, labels in steps:
            opt.zero_grad()
            loss = loss_fn(feats, labels)
            loss.backward()
            opt.step()
            found.append(loss.detach())
        out["losses"] = torch.stack(found)
        out.update({k: params[k].detach() for k in WATCHED})
        m.eval()
        out["embeddings_after"] = m.encode(SENTENCES[:3], convert_to_tensor=True)
        return out
    return run


def cases(dt):
    return {"encode": encode(dt), "train": train(dt)}
