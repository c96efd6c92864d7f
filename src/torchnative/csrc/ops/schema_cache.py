"""Parsed schemas of upstream's built-in operators, kept on disk between processes.

``import torch`` makes upstream's Python build an ``OpOverloadPacket`` for about a thousand
operators, and each reads every overload's ``FunctionSchema``: some 2,400 parses, most of the
CPU time our import adds. Upstream parses them in C++; we parse them once per machine and keep
the result next to the native-function table's cache (``native_functions.cached_generated``).

A schema is stored as plain values: names, defaults, alias sets, and each type as the recipe
that rebuilds the *same interned object* the parser returns (``jit_types`` interns its types),
so a schema from the cache and one from the parser are indistinguishable. Each entry is kept as
its own ``marshal`` string and rebuilt only when asked for: the table is then one dict of strings,
not some 24,000 tuples and lists that every full garbage collection of the process would walk.
A type without such a
recipe (a refined tensor type, a class type) keeps its schema out of the cache; so does a schema
the parser marks volatile. Every stored schema is rebuilt and compared with the parse before the
cache is written. The key covers the yaml files and this module's, the parser's and the type
module's sources: a change to any of them regenerates the table.
"""

from __future__ import annotations

import functools
import hashlib
import marshal
from pathlib import Path

from . import jit_types as jt
from . import schema as S
from .native_functions import cached_generated


class _Uncacheable(Exception):
    pass


_SINGLETONS = {cls.get()._kind: cls.get() for cls in (
    jt.AnyType, jt.NoneType, jt.BoolType, jt.FloatType, jt.ComplexType, jt.IntType, jt.SymIntType,
    jt.SymBoolType, jt.NumberType, jt.StringType, jt.DeviceObjType, jt._GeneratorType,
    jt.StreamObjType, jt.PyObjectType)}
_WRAPPERS = {"ListType": jt.list_of, "OptionalType": jt.optional_of, "FutureType": jt.future_of,
             "AwaitType": jt.await_of, "RRefType": jt.rref_of}


def _encode_type(t):
    kind = t._kind
    if t is jt._TENSOR:
        return ("T",)
    if t is jt._TENSOR_INFERRED:
        return ("TI",)
    if _SINGLETONS.get(kind) is t:
        return ("S", kind)
    if jt._PLAIN.get(kind) is t:
        return ("P", kind)
    if kind == "VarType" and jt.var_type(t._str) is t:
        return ("V", t._str)
    parts = getattr(t, "_parts", None)
    if parts is not None:
        enc = tuple(_encode_type(p) for p in parts)
        if _decode_type((kind, enc)) is t:
            return (kind, enc)
    raise _Uncacheable(kind)


def _decode_type(e):
    tag = e[0]
    if tag == "T":
        return jt._TENSOR
    if tag == "TI":
        return jt._TENSOR_INFERRED
    if tag == "S":
        return _SINGLETONS[e[1]]
    if tag == "P":
        return jt._PLAIN[e[1]]
    if tag == "V":
        return jt.var_type(e[1])
    parts = [_decode_type(p) for p in e[1]]
    if tag in _WRAPPERS:
        return _WRAPPERS[tag](*parts)
    if tag == "TupleType":
        return jt.tuple_of(parts)
    if tag == "DictType":
        return jt.dict_of(*parts)
    if tag == "UnionType":
        return jt.union_of(parts)
    raise _Uncacheable(tag)


def _encode_alias(a):
    if a is None:
        return None
    if type(a) is not S._AliasInfo:
        raise _Uncacheable("alias")
    return (a._is_write, list(a._before), list(a._after), [_encode_alias(c) for c in a._contained])


def _decode_alias(e):
    """The parser's lists as tuples: only the parser appends to them, and a tuple of strings
    leaves the collector's lists once it has been examined (a list never does)."""
    if e is None:
        return None
    a = object.__new__(S._AliasInfo)
    a._is_write, a._before, a._after = e[0], tuple(e[1]), tuple(e[2])
    a._contained = tuple(_decode_alias(c) for c in e[3])
    return a


_NO_DEFAULT = ("no default",)  # a tuple: no schema default is one


def _encode_argument(a):
    if type(a) is not S.Argument:
        raise _Uncacheable("argument")
    default = _NO_DEFAULT if a._default is S._NO_DEFAULT else a._default
    if type(default) is tuple and default is not _NO_DEFAULT:
        raise _Uncacheable("default")
    return (a._name, _encode_type(a._type), _encode_type(a._real_type), a._N, default,
            a._kwarg_only, _encode_alias(a._alias_info))


def _decode_argument(e):
    name, fake, real, n, default, kwarg_only, alias = e
    if type(default) is tuple:
        default = S._NO_DEFAULT
    elif type(default) is list:
        default = list(default)
    return S._init_argument(object.__new__(S.Argument), name, _decode_type(fake), _decode_type(real),
                            n, default, kwarg_only, _decode_alias(alias))


def encode(s) -> tuple:
    if type(s) is not S.FunctionSchema:
        raise _Uncacheable("schema")
    return (s._name, s._overload_name, tuple(_encode_argument(a) for a in s._arguments),
            tuple(_encode_argument(a) for a in s._returns), s._is_vararg, s._is_varret)


def decode(e):
    name, overload, args, rets, vararg, varret = e
    return S._init_schema(object.__new__(S.FunctionSchema), name, overload,
                          tuple(_decode_argument(a) for a in args),
                          tuple(_decode_argument(a) for a in rets), vararg, varret)


def _same_argument(a, b) -> bool:
    return (a._name == b._name and a._type is b._type and a._real_type is b._real_type
            and a._N == b._N and type(a._default) is type(b._default)
            and (a._default is b._default or a._default == b._default)
            and a._kwarg_only == b._kwarg_only and a._is_out == b._is_out
            and S._alias_eq(a._alias_info, b._alias_info))


def same(a, b) -> bool:
    """``b`` is ``a`` rebuilt: every field equal and every type the same object."""
    return (a._name == b._name and a._overload_name == b._overload_name
            and a._is_vararg == b._is_vararg and a._is_varret == b._is_varret
            and len(a._arguments) == len(b._arguments) and len(a._returns) == len(b._returns)
            and all(map(_same_argument, a._arguments, b._arguments))
            and all(map(_same_argument, a._returns, b._returns)) and str(a) == str(b))


def builtin_schema_strings() -> list[str]:
    """Every schema string the operator registry hands the parser for upstream's built-ins."""
    from ..core.tables import cpp_ops_by_qualname
    from .native_functions import native_functions

    out = [f"aten::{nf.schema}" for nf in native_functions()]
    for entries in cpp_ops_by_qualname().values():
        for entry in entries:
            s = entry["schema"]
            out.append(s if "::" in s.split("(")[0] else f"aten::{s}")
    return out


def _generate() -> dict[str, bytes]:
    table = {}
    for text in builtin_schema_strings():
        parser = S._Parser(text, True)
        try:
            parsed = parser.parse_exactly_one()
            if parser.volatile:
                continue
            enc = marshal.dumps(encode(parsed))
            if not same(parsed, decode(marshal.loads(enc))):
                continue
        except Exception:  # noqa: BLE001 - left to the parser, which raises it on first use
            continue
        table[text] = enc
    return table


def _sources_key() -> str:
    raw = b"".join(Path(m.__file__).read_bytes() for m in (S, jt)) + Path(__file__).read_bytes()
    return hashlib.sha256(raw).hexdigest()[:16]


@functools.cache
def table() -> dict[str, bytes]:
    return cached_generated(f"parsed_schemas-{_sources_key()}", _generate)


def parse_builtin(text: str):
    """``schema.parse_schema(text)`` for a built-in operator's schema string, from the table when
    it holds it (entered into the parser's own cache, so later parses of the text return this
    very object, as they would after a parse)."""
    key = (text, True)
    hit = S._CACHE.get(key)
    if type(hit) is S.FunctionSchema:
        return hit
    enc = table().get(text)
    if enc is None:
        return S.parse_schema(text)
    s = S._CACHE[key] = decode(marshal.loads(enc))
    return s
