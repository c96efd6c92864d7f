"""Tiny configs for every transformers architecture, derived from each config class's defaults.

transformers ships a config class for every architecture but no small instance of it (its test
suite's model testers are not in the wheel). This module shrinks the defaults by rule: widths,
depths, head counts, expert counts and vocabularies are capped; per-layer lists keep two entries
(one of each kind, so hybrid models keep an attention layer); token ids are moved inside the
small vocabulary. The rules are generic, so some architectures reject the result; the sweep
reports those as "not built" with transformers' own message, never hides them.

Plain transformers code: it runs on upstream torch and on ours.
"""

from __future__ import annotations

import zlib

import numpy as np

VOCAB = 256
LAYERS = 2
CAPS = {}
for _k in ("hidden_size", "d_model", "n_embd", "embed_dim", "word_embed_proj_dim",
           "attention_hidden_size", "projection_dim", "text_embed_dim", "vision_embed_dim"):
    CAPS[_k] = 32
for _k in ("intermediate_size", "ffn_dim", "d_ff", "encoder_ffn_dim", "decoder_ffn_dim",
           "moe_intermediate_size", "shared_expert_intermediate_size", "ffn_hidden_size",
           "expert_intermediate_size", "dense_intermediate_size"):
    CAPS[_k] = 64
for _k in ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "encoder_layers",
           "decoder_layers", "num_decoder_layers", "num_encoder_layers"):
    CAPS[_k] = LAYERS
for _k in ("num_attention_heads", "n_head", "num_heads", "encoder_attention_heads",
           "decoder_attention_heads", "n_heads"):
    CAPS[_k] = 4
for _k in ("num_key_value_heads", "num_kv_heads", "multi_query_group_num"):
    CAPS[_k] = 2
for _k in ("head_dim", "d_kv", "kv_channels", "rotary_dim", "qk_rope_head_dim",
           "qk_nope_head_dim", "v_head_dim", "rotary_emb_base_dim"):
    CAPS[_k] = 8
for _k in ("kv_lora_rank", "q_lora_rank"):
    CAPS[_k] = 16
for _k in ("num_local_experts", "num_experts", "n_routed_experts"):
    CAPS[_k] = 4
for _k in ("num_experts_per_tok", "moe_topk", "top_k", "n_shared_experts"):
    CAPS[_k] = 2
CAPS["max_position_embeddings"] = 512
CAPS["image_size"] = 32
CAPS["num_mel_bins"] = 16
CAPS["max_source_positions"] = 32
CAPS["max_target_positions"] = 64
LIST_CAPS = {"hidden_sizes": 16, "conv_dim": 32, "embed_dims": 16, "depths": 1,
             "num_heads": 2, "neck_hidden_sizes": 16}
TOKEN_IDS = ("bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id",
             "sep_token_id", "cls_token_id", "unk_token_id", "mask_token_id")
SMALL_IDS = {"pad_token_id": 0, "bos_token_id": 1, "eos_token_id": 2}


def _two_layers(values: list) -> list:
    """Two entries of a per-layer list: the first, and the first of another kind if any."""
    other = next((v for v in values if v != values[0]), values[0])
    return [values[0], other]


def shrink(config: dict) -> dict:
    """A small version of a config dict (``to_dict()`` of a transformers config)."""
    layers = next((config[k] for k in ("num_hidden_layers", "n_layer", "num_layers", "n_layers")
                   if isinstance(config.get(k), int)), None)
    out = {}
    for key, value in config.items():
        if isinstance(value, dict) and "model_type" in value:
            out[key] = shrink(value)
        elif key in CAPS and isinstance(value, int) and not isinstance(value, bool):
            out[key] = min(value, CAPS[key])
        elif key == "vocab_size" and isinstance(value, int):
            out[key] = min(value, VOCAB)
        elif key in LIST_CAPS and isinstance(value, list) and value and all(
                isinstance(v, int) for v in value):
            out[key] = [min(v, LIST_CAPS[key] * (1 if key in ("depths", "num_heads") else 2 ** i))
                        for i, v in enumerate(value)]
        elif (isinstance(value, list) and layers and len(value) == layers and layers > LAYERS
              and key not in LIST_CAPS):
            out[key] = _two_layers(value)
        elif key == "per_layer_config" and isinstance(value, dict):
            out[key] = {k: v for k, v in value.items() if str(k).isdigit() and int(k) < LAYERS}
        else:
            out[key] = value
    vocab = out.get("vocab_size", VOCAB)
    for key in TOKEN_IDS:
        value = out.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= vocab:
            out[key] = SMALL_IDS.get(key, 3)
        elif isinstance(value, list):
            out[key] = [v if v < vocab else 2 for v in value]
    return out


def tiny_config(model_type: str):
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    cls = CONFIG_MAPPING[model_type]
    return cls.from_dict(shrink(cls().to_dict()))


def inputs_for(model, seed_text: str) -> dict:
    """Deterministic inputs (numpy) for the model's main input, seeded by the architecture name."""
    rng = np.random.default_rng(zlib.crc32(seed_text.encode()))
    cfg = model.config
    name = model.main_input_name
    if name == "input_ids":
        vocab = getattr(cfg, "vocab_size", None) or getattr(
            getattr(cfg, "text_config", None), "vocab_size", VOCAB)
        out = {"input_ids": rng.integers(3, min(vocab, VOCAB), size=(1, 8), dtype=np.int64)}
        if getattr(cfg, "is_encoder_decoder", False):
            out["decoder_input_ids"] = np.concatenate(
                [np.zeros((1, 1), np.int64), out["input_ids"][:, :3]], axis=1)
        return out
    if name == "pixel_values":
        size = getattr(cfg, "image_size", 32)
        size = size[0] if isinstance(size, (list, tuple)) else size
        channels = getattr(cfg, "num_channels", 3)
        return {"pixel_values": rng.standard_normal((1, channels, size, size), np.float32)}
    if name == "input_values":
        return {"input_values": rng.standard_normal((1, 1600), np.float32)}
    if name == "input_features":
        bins = getattr(cfg, "num_mel_bins", None) or getattr(cfg, "feature_size", 80)
        frames = 2 * getattr(cfg, "max_source_positions", 32)
        out = {"input_features": rng.standard_normal((1, bins, frames), np.float32)}
        if getattr(cfg, "is_encoder_decoder", False):
            out["decoder_input_ids"] = np.array([[getattr(cfg, "decoder_start_token_id", 0)
                                                  or 0, 5, 9]], np.int64)
        return out
    raise ValueError(f"no input rule for main input {name!r}")
