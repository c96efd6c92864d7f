"""ATen's float32 precision settings (``at::Context``): the per-backend, per-operator table behind
``torch.backends.fp32_precision`` / ``torch.backends.{mkldnn,cuda,cudnn}.*.fp32_precision``, and
the legacy switches it is kept consistent with (``torch.set_float32_matmul_precision``,
``torch.backends.cuda.matmul.allow_tf32``, ``torch.backends.cudnn.allow_tf32``).

Nothing here changes ours' arithmetic (no TF32 or bfloat16 products on a CPU build: upstream's
CPU float32 products ignore them too); it is the state and its rules, as upstream's 2.13 build
answers them, read off it call by call (tests/differential/test_fp32_precision.py):

* A value set for (backend, op) is the answer; ``"none"`` defers to the backend's ``all``, then
  to ``generic``'s. cuDNN's conv and rnn default to ``tf32`` until they are set, but a value set
  above them wins over that default. CUDA has no ``bf16``: where it would inherit one, ``none``.
* The legacy getters refuse a state that only the new API can express (their mix errors).
"""

from __future__ import annotations

from ..core.typename import typename
from ..platform.torch_warn import torch_warn
from ..platform.pybind_errors import incompatible_arguments

_BACKENDS = {"generic": 0, "cuda": 1, "mkldnn": 2}
_OPS = {"all": 0, "conv": 1, "rnn": 2, "matmul": 3}
_PRECISIONS = ("none", "ieee", "tf32", "bf16")
_UNSUPPORTED = {"cuda": ("bf16",)}
_DEFAULTS = {("cuda", "conv"): "tf32", ("cuda", "rnn"): "tf32"}

_set: dict = {}  # (backend, op) -> the precision the user (or a legacy setter) set
_state = {"matmul": "highest", "cudnn": True}  # the legacy float32 matmul precision, cuDNN flag

_DOCS = ("See also: https://pytorch.org/docs/main/notes/cuda.html"
         "#tensorfloat-32-tf32-on-ampere-and-later-devices")
_MIX_MATMUL = ("PyTorch is checking the matmul precision without a specific backend name,Current "
               "status indicate that you have used mix of the legacy and new APIs to set the "
               "matmul precision. We suggest only using the new API for matmul precision. " + _DOCS)
_MIX_CUBLAS = ("PyTorch is checking whether allow_tf32_new is enabled for cuBlas matmul,Current "
               "status indicate that you have used mix of the legacy and new APIs to set the TF32 "
               "status for cublas matmul. We suggest only using the new API to set the TF32 flag. "
               + _DOCS)
_MIX_CUDNN = ("PyTorch is checking whether allow_tf32 is enabled for cuDNN without a specific "
              "operator name,but the current flag(s) indicate that cuDNN conv and cuDNN RNN have "
              "different TF32 flags.This combination indicates that you have used a mix of the "
              "legacy and new APIs to set the TF32 flags. We suggest only using the new API to set "
              "the TF32 flag(s). " + _DOCS)


def _pybind_args(name: str, params: str, args: tuple) -> None:
    """pybind11's refusal of a call whose arguments are not all str."""
    if len(args) != params.count("arg") or not all(type(a) is str for a in args):
        raise incompatible_arguments(name, [f"({params}) -> str"], args)


def _pair(backend: str, op: str) -> None:
    if op not in _OPS:
        raise RuntimeError(f"Unknown op: {op}")
    if backend not in _BACKENDS:
        raise RuntimeError(f"Unknown backend: {backend}")
    if backend == "generic" and op != "all":
        raise RuntimeError(f"Invalid (backend, op) pair: ({_BACKENDS[backend]}, {_OPS[op]})")


def precision(backend: str, op: str) -> str:
    """``Context::float32Precision``: the precision in force for (backend, op)."""
    _pair(backend, op)
    for key in ((backend, op), (backend, "all"), ("generic", "all")):
        p = _set.get(key, "none")
        if p != "none":
            return "none" if p in _UNSUPPORTED.get(backend, ()) else p
    return "none" if (backend, op) in _set else _DEFAULTS.get((backend, op), "none")


def set_precision(backend: str, op: str, p: str) -> None:
    if p not in _PRECISIONS:
        raise RuntimeError(f"Unknown precision: {p}")
    _pair(backend, op)
    if p in _UNSUPPORTED.get(backend, ()):
        raise RuntimeError(f"backend '{backend}' does not support precision '{p}'")
    _set[(backend, op)] = p


def get_fp32_precision_getter(*args) -> str:
    _pybind_args("_get_fp32_precision_getter", "arg0: str, arg1: str", args)
    return precision(*args)


def set_fp32_precision_setter(*args) -> str:
    _pybind_args("_set_fp32_precision_setter", "arg0: str, arg1: str, arg2: str", args)
    set_precision(*args)
    return args[2]


# --- the legacy switches ------------------------------------------------------------------------

_MATMUL = {"highest": ("ieee", "ieee"), "high": ("tf32", "tf32"), "medium": ("tf32", "bf16")}


def set_float32_matmul_precision(value) -> None:
    if type(value) is not str:
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {typename(value)}")
    if value not in _MATMUL:
        torch_warn(f"{value} is not one of 'highest', 'high', or 'medium'; the current"
                   "setFloat32MatmulPrecision call has no effect.")
        return
    _state["matmul"] = value
    cuda, mkldnn = _MATMUL[value]
    set_precision("cuda", "matmul", cuda)
    set_precision("mkldnn", "matmul", mkldnn)


def get_float32_matmul_precision() -> str:
    legacy = _state["matmul"]
    cuda, mkldnn = precision("cuda", "matmul"), precision("mkldnn", "matmul")
    if (cuda == "tf32" and legacy == "highest") or (mkldnn == "bf16" and legacy != "medium") or \
            (mkldnn == "tf32" and legacy != "high"):
        raise RuntimeError(_MIX_MATMUL)
    return legacy


def _bool(value) -> bool:
    if type(value) is not bool:  # (upstream names the cuBLAS setter for both switches)
        raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got {typename(value)}")
    return value


def set_cublas_allow_tf32(value) -> None:
    b = _bool(value)
    _state["matmul"] = "high" if b else "highest"
    set_precision("cuda", "matmul", "tf32" if b else "ieee")


def get_cublas_allow_tf32() -> bool:
    new = precision("cuda", "matmul") == "tf32"
    if new != (_state["matmul"] != "highest"):
        raise RuntimeError(_MIX_CUBLAS)
    return new


def set_cudnn_allow_tf32(value) -> None:
    b = _bool(value)
    set_precision("cuda", "rnn", "tf32" if b else "none")
    set_precision("cuda", "conv", "tf32" if b else "none")
    _state["cudnn"] = b


def get_cudnn_allow_tf32() -> bool:
    rnn, conv = precision("cuda", "rnn") == "tf32", precision("cuda", "conv") == "tf32"
    if not rnn == conv == _state["cudnn"]:
        raise RuntimeError(_MIX_CUDNN)
    return _state["cudnn"]


TORCH_C = {
    "torch._C._get_fp32_precision_getter": get_fp32_precision_getter,
    "torch._C._set_fp32_precision_setter": set_fp32_precision_setter,
    "torch._C._set_float32_matmul_precision": set_float32_matmul_precision,
    "torch._C._get_float32_matmul_precision": get_float32_matmul_precision,
    "torch._C._set_cublas_allow_tf32": set_cublas_allow_tf32,
    "torch._C._get_cublas_allow_tf32": get_cublas_allow_tf32,
    "torch._C._set_cudnn_allow_tf32": set_cudnn_allow_tf32,
    "torch._C._get_cudnn_allow_tf32": get_cudnn_allow_tf32,
}
