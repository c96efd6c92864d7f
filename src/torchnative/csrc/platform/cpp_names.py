"""How upstream's C++ names a dtype in its messages. Two spellings, both fixed by the build:

- ``TYPEMETA``: caffe2::TypeMeta's name (``get_fully_qualified_type_name<T>()``, read off GCC's
  ``__PRETTY_FUNCTION__``): "Expected out tensor to have dtype long int", "mask with dtype
  short unsigned int", "from is out of bounds for unsigned char".
- ``SCALAR_CPP``: the C++ type c10's ScalarType table pairs with each dtype
  (AT_FORALL_SCALAR_TYPES_WITH_COMPLEX), which ``Scalar::to<T>()`` prints: "value cannot be
  converted to type int without overflow" (int32 is ``int`` there, not ``int32_t``).

Keyed by our dtype names; tests/differential/test_cpp_names.py checks both against upstream's
messages.
"""

from __future__ import annotations

TYPEMETA = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "uint16": "short unsigned int",
    "uint32": "unsigned int", "uint64": "long unsigned int", "float16": "c10::Half",
    "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
    "complex32": "c10::complex<c10::Half>", "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}

SCALAR_CPP = {
    "bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
    "int64": "int64_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
    "float16": "c10::Half", "bfloat16": "c10::BFloat16", "float32": "float",
    "float64": "double", "complex32": "c10::complex<c10::Half>",
    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
    "float8_e4m3fn": "c10::Float8_e4m3fn", "float8_e4m3fnuz": "c10::Float8_e4m3fnuz",
    "float8_e5m2": "c10::Float8_e5m2", "float8_e5m2fnuz": "c10::Float8_e5m2fnuz",
}


def typemeta(name: str, cpp_name: str = "") -> str:
    """TypeMeta's name for dtype ``name``; c10's own types (float8 ...) print as ``c10::<Name>``."""
    return TYPEMETA.get(name) or ("c10::" + cpp_name if cpp_name else name)


def scalar_cpp(name: str) -> str:
    return SCALAR_CPP.get(name, name)
