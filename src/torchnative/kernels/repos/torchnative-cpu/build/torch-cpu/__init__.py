"""torchnative-cpu: fused CPU kernels (numpy) for Llama-style models, in the Hugging Face
kernels layout. Layers: RMSNorm, RotaryPosEmb, SiLU, SiluAndMul; function: attention."""

from . import layers
from ._ops import attention as attention_op, rms_norm, rotary, silu, silu_and_mul
from .layers import attention

__all__ = ["layers", "attention", "attention_op", "rms_norm", "rotary", "silu", "silu_and_mul"]
