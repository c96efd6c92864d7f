"""torchnative-cpu: fused CPU kernels (numpy) for Llama-style models, in the Hugging Face
kernels layout. Layers: RMSNorm, RotaryPosEmb, SiLU, SiluAndMul; function: attention.

transformers (5.24) takes an attention kernel named by ``attn_implementation="org/name"``
either as flash attention (``flash_attn_varlen_func``) or, when the module has
``flash_attn_forward`` and ``supports_flash_attn``, as a function of its attention interface
fed transformers' sdpa mask: ``attention`` is the latter, so it is exported under that name."""

from . import layers
from ._ops import attention as attention_op, rms_norm, rotary, silu, silu_and_mul
from .layers import attention

flash_attn_forward = attention
supports_flash_attn = True

__all__ = ["layers", "attention", "attention_op", "flash_attn_forward", "rms_norm", "rotary",
           "silu", "silu_and_mul", "supports_flash_attn"]
