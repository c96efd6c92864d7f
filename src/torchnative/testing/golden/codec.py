"""Values <-> (JSON descriptor, numpy arrays), for both interpreters.

A case's inputs must reach ours exactly as upstream saw them, layout included, so an input tensor is
stored as the prefix of its storage (``storage=True``) with dtype, shape, strides and storage offset:
non-contiguous, overlapping (broadcast, stride 0) and offset inputs survive the trip. Outputs are
compared by value, so they are stored as their logical values (``storage=False``) with strides and
offset kept only as metadata.

numpy has no bfloat16/complex32/float8: those travel as raw bits in an unsigned integer array of the
same width, tagged with the real dtype (``"bits": true``). ``decode`` needs ``torch`` (it runs in a
worker); ``to_numpy_values`` is numpy-only and is what the comparators use.
"""

from __future__ import annotations

import numpy as np

# torch dtype name -> numpy dtype, for dtypes numpy holds natively.
NATIVE = {
    "float16": np.float16, "float32": np.float32, "float64": np.float64,
    "complex64": np.complex64, "complex128": np.complex128, "bool": np.bool_,
    "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
}
# torch dtype name -> (torch integer dtype of the same width used to reinterpret, numpy bits dtype)
BITS = {
    "bfloat16": ("int16", np.uint16), "complex32": ("int32", np.uint32),
    "float8_e4m3fn": ("uint8", np.uint8), "float8_e5m2": ("uint8", np.uint8),
    "float8_e4m3fnuz": ("uint8", np.uint8), "float8_e5m2fnuz": ("uint8", np.uint8),
}
FLOATING = {"float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2",
            "float8_e4m3fnuz", "float8_e5m2fnuz"}
COMPLEX = {"complex32", "complex64", "complex128"}
# Reruns that measure upstream's own precision: floating inputs widened to float64 (the reference for
# narrower dtypes), or float64 inputs narrowed to float32 (float64's sensitivity, scaled in ulps).
UPCAST = {"float16": "float64", "bfloat16": "float64", "float32": "float64", "complex32": "complex128",
          "complex64": "complex128"}
NARROW = {"float64": "float32", "complex128": "complex64"}


class Unserializable(Exception):
    """A value the harness cannot carry between interpreters (the sample is skipped and counted)."""


def dtype_name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


class Store:
    """Arrays of one file, named a0, a1, ...; saved as one .npz next to the JSON that names them."""

    def __init__(self, prefix: str = "a", arrays: dict | None = None):
        self.prefix, self.arrays = prefix, dict(arrays or {})

    def put(self, arr: np.ndarray) -> str:
        key = f"{self.prefix}{len(self.arrays)}"
        self.arrays[key] = arr
        return key

    def save(self, path):
        np.savez(path, **self.arrays)


# ---------------------------------------------------------------------------------------------- encode

def encode(value, store: Store, torch, storage: bool):
    """Describe ``value`` as JSON, putting tensor data in ``store``; raises Unserializable."""
    if isinstance(value, torch.Tensor):
        return _encode_tensor(value, store, torch, storage)
    if value is None:
        return {"T": "none"}
    # exact types: a numpy scalar where upstream returns a Python number is a difference, not a float
    if type(value) is bool:
        return {"T": "bool", "v": value}
    if type(value) is int:
        return {"T": "int", "v": value}
    if type(value) is float:
        return {"T": "float", "v": value}
    if type(value) is complex:
        return {"T": "complex", "re": value.real, "im": value.imag}
    if isinstance(value, str):
        return {"T": "str", "v": value}
    if isinstance(value, torch.dtype):
        return {"T": "dtype", "v": dtype_name(value)}
    if isinstance(value, torch.device):
        return {"T": "device", "v": str(value)}
    if isinstance(value, torch.layout):
        return {"T": "layout", "v": dtype_name(value)}
    if isinstance(value, torch.memory_format):
        return {"T": "memory_format", "v": dtype_name(value)}
    if isinstance(value, torch.Size):
        return {"T": "size", "v": [int(x) for x in value]}
    if isinstance(value, slice):
        return {"T": "slice", "v": [encode(x, store, torch, storage) for x in
                                      (value.start, value.stop, value.step)]}
    if value is Ellipsis:
        return {"T": "ellipsis"}
    if isinstance(value, (list, tuple)):
        desc = {"T": "list" if isinstance(value, list) else "tuple",
                "v": [encode(x, store, torch, storage) for x in value]}
        fields = getattr(type(value), "_fields", None) or getattr(type(value), "__match_args__", None)
        if type(value) not in (list, tuple) and fields:  # torch.return_types.max and friends
            desc["name"], desc["fields"] = type(value).__name__, list(fields)
        return desc
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"T": "dict", "v": {k: encode(v, store, torch, storage) for k, v in value.items()}}
    raise Unserializable(type(value).__qualname__)


def encode_lenient(value, store: Store, torch, limit: int | None = None):
    """``encode`` where what cannot travel becomes ``{"T": "opaque"}`` (type and, for tensors over
    ``limit`` bytes, shape and dtype): the descriptor of a sample each worker regenerates (live.py),
    kept for the comparators that read arguments (dim=, ties), never decoded."""
    if isinstance(value, torch.Tensor) and limit is not None and value.numel() * value.element_size() > limit:
        return {"T": "opaque", "type": "Tensor", "shape": list(value.shape), "dtype": dtype_name(value.dtype)}
    if type(value) in (list, tuple):
        return {"T": type(value).__name__, "v": [encode_lenient(x, store, torch, limit) for x in value]}
    if type(value) is dict and all(isinstance(k, str) for k in value):
        return {"T": "dict", "v": {k: encode_lenient(v, store, torch, limit) for k, v in value.items()}}
    try:
        return encode(value, store, torch, storage=True)
    except Unserializable as exc:
        return {"T": "opaque", "type": str(exc)}


def _encode_tensor(t, store, torch, storage):
    if t.layout != torch.strided or t.device.type != "cpu" or t.is_quantized:
        raise Unserializable(f"tensor layout={t.layout} device={t.device}")
    t = t.detach()
    if t.is_conj() or t.is_neg():  # lazy conjugate/negative views: materialize (layout not kept)
        t = t.resolve_conj().resolve_neg()
    name = dtype_name(t.dtype)
    desc = {"T": "tensor", "dtype": name, "shape": list(t.shape), "stride": list(t.stride()),
            "offset": int(t.storage_offset()), "storage": storage}
    if storage:
        n = 0 if t.numel() == 0 else t.storage_offset() + 1 + sum(
            (s - 1) * st for s, st in zip(t.shape, t.stride()))
        t = torch.as_strided(t, (n,), (1,), 0)
    arr = tensor_to_numpy(t, torch)
    desc["bits"] = name in BITS
    desc["data"] = store.put(np.ascontiguousarray(arr))
    return desc


def tensor_to_numpy(t, torch) -> np.ndarray:
    """Logical values of a CPU tensor as numpy (raw bits for dtypes numpy lacks)."""
    name = dtype_name(t.dtype)
    if name in BITS:
        width, np_bits = BITS[name]
        return _numpy(t.view(getattr(torch, width)), torch).view(np_bits)
    if name not in NATIVE:
        raise Unserializable(f"dtype {name}")
    return _numpy(t, torch)


def _numpy(t, torch):
    try:
        return np.asarray(t.numpy())
    except Exception:  # an interpreter without Tensor.numpy(): slow but layout-independent
        return np.array(t.tolist(), dtype=NATIVE.get(dtype_name(t.dtype))).reshape(tuple(t.shape))


# ---------------------------------------------------------------------------------------------- decode

def decode(desc, arrays, torch, cast: dict | None = None, keep: list | None = None):
    """Rebuild a value in this interpreter. ``cast`` maps dtype names (UPCAST/NARROW reruns).

    Tensors are rebuilt as a flat base (``empty_strided`` + ``copy_``) viewed with ``as_strided``,
    so the op sees upstream's strides and storage offset. ``keep`` collects rebuilt tensors in order.
    """
    kind = desc["T"]
    if kind == "tensor":
        t = _decode_tensor(desc, arrays, torch, cast or {})
        if keep is not None:
            keep.append(t)
        return t
    if kind == "empty":  # a pre-allocated out= tensor
        t = torch.zeros(desc["shape"], dtype=getattr(torch, desc["dtype"]))
        if keep is not None:
            keep.append(t)
        return t
    if kind in ("none", "ellipsis"):
        return None if kind == "none" else Ellipsis
    if kind in ("bool", "int", "float", "str"):
        return desc["v"]
    if kind == "complex":
        return complex(desc["re"], desc["im"])
    if kind in ("dtype", "layout", "memory_format"):
        return getattr(torch, desc["v"])
    if kind == "device":
        return torch.device(desc["v"])
    if kind == "size":
        return torch.Size(desc["v"])
    if kind == "slice":
        return slice(*(decode(x, arrays, torch, cast, keep) for x in desc["v"]))
    if kind in ("list", "tuple"):
        items = [decode(x, arrays, torch, cast, keep) for x in desc["v"]]
        return items if kind == "list" else tuple(items)
    if kind == "dict":
        return {k: decode(v, arrays, torch, cast, keep) for k, v in desc["v"].items()}
    raise ValueError(f"unknown descriptor {kind}")


def _decode_tensor(desc, arrays, torch, cast: dict):
    name, flat = desc["dtype"], arrays[desc["data"]]
    if name in cast:
        flat, name = widen(desc, flat).astype(NATIVE[cast[name]]), cast[name]
    elif name in BITS:
        width = BITS[name][0]
        src = torch.from_numpy(np.ascontiguousarray(flat).view(NATIVE[width]))
        base = torch.empty_strided((flat.size,), (1,), dtype=getattr(torch, width)).copy_(src)
        return _layout(base.view(getattr(torch, name)), desc)
    base = torch.empty_strided((flat.size,), (1,), dtype=getattr(torch, name))
    base.copy_(torch.from_numpy(np.ascontiguousarray(flat)))
    return _layout(base, desc)


def _layout(base, desc):
    if not desc["storage"]:
        return base.reshape(desc["shape"])
    return base.as_strided(desc["shape"], desc["stride"], desc["offset"])


# ---------------------------------------------------------------------------------------------- numpy side

def to_numpy_values(desc, arr: np.ndarray) -> np.ndarray:
    """Comparable numpy values of a stored tensor: bits widened to float32/complex64, layout applied."""
    arr = widen(desc, arr)
    if not desc["storage"]:
        return arr
    if arr.size == 0:
        return np.zeros(desc["shape"], arr.dtype)
    return np.array(np.lib.stride_tricks.as_strided(
        arr[desc["offset"]:], desc["shape"], [s * arr.itemsize for s in desc["stride"]]))


def widen(desc, arr: np.ndarray) -> np.ndarray:
    """Raw bits of a dtype numpy lacks -> float32/complex64 values of the same shape (exact)."""
    if not desc.get("bits"):
        return arr
    name = desc["dtype"]
    if name == "bfloat16":
        return (arr.astype(np.uint32) << 16).view(np.float32)
    if name == "complex32":
        halves = arr.reshape(-1).view(np.float16).astype(np.float32)
        return (halves[0::2] + 1j * halves[1::2]).astype(np.complex64).reshape(arr.shape)
    try:
        import ml_dtypes  # float8 family
        return arr.view(getattr(ml_dtypes, name)).astype(np.float32)
    except (ImportError, AttributeError) as exc:
        raise Unserializable(f"cannot widen {name}") from exc


def finfo(name: str):
    """(eps, smallest normal) of a floating/complex dtype name, bfloat16 included."""
    if name == "bfloat16":
        return 2.0 ** -7, 2.0 ** -126
    if name == "complex32":
        name = "float16"
    base = {"complex64": "float32", "complex128": "float64"}.get(name, name)
    if base.startswith("float8"):
        import ml_dtypes
        info = ml_dtypes.finfo(getattr(ml_dtypes, base))
        return float(info.eps), float(info.smallest_normal)
    info = np.finfo(NATIVE[base])
    return float(info.eps), float(info.smallest_normal)


def is_float_name(name: str) -> bool:
    return name in FLOATING or name in COMPLEX

