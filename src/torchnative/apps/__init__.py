"""User-facing programs built on the real torch + transformers: chat and sentence embeddings."""
