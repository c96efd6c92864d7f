"""What oneDNN computes natively on this CPU (mkldnn::_is_mkldnn_*_supported): upstream answers
from the ISA oneDNN finds (capped by ONEDNN_MAX_CPU_ISA), and the same answer decides whether its
bfloat16/float16 convolutions run on oneDNN or on its slow kernels (nn_conv.py)."""

from __future__ import annotations

from ..ops.kernel_registry import kernel
from ..platform import cpu_capability


@kernel("mkldnn::_is_mkldnn_bf16_supported")
def _is_mkldnn_bf16_supported() -> bool:
    return cpu_capability.ONEDNN_BF16


@kernel("mkldnn::_is_mkldnn_fp16_supported")
def _is_mkldnn_fp16_supported() -> bool:
    return cpu_capability.ONEDNN_FP16


@kernel("mkldnn::_is_mkldnn_acl_supported")
def _is_mkldnn_acl_supported() -> bool:
    # the Arm Compute Library backs oneDNN only in upstream's aarch64 builds
    return cpu_capability._ARM
