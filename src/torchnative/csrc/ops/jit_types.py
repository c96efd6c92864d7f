"""JIT type objects as upstream's ``torch._C`` exposes them (``c10::Type`` and its pybind classes).

Upstream Python reads these through schemas: ``arg.type.kind()``, ``isinstance(t, torch.ListType)``,
``t.getElementType()``, ``t.isSubtypeOf(...)``, ``t.annotation_str`` (fx evals it), ``str(t)``.
Three spellings exist and differ: ``repr``/``str``/``annotation_str`` give the Python annotation
(``List[int]``, ``Optional[Tensor]``, ``number``), ``_str`` is C++ ``Type::str()`` used by schema
printing (``int[]``, ``Tensor?``, ``Scalar``, ``Future(Tensor)``) and the Python ``.str()`` method is
C++ ``operator<<`` (like ``_str`` but ``Future[...]``/``RRef[...]`` and refined tensors).

Types are immutable and interned (equal composite types are usually the same object), so schema
parsing allocates little; equality is still structural. Kinds upstream has no Python class for
(``ScalarType``, ``Layout``, ``MemoryFormat``, ``Storage``, type variables...) are plain ``Type``
instances, as upstream's pybind returns them.
"""

from __future__ import annotations

from ..core import dtypes as _dtypes
from ..core.device import device as _device
from ..core.refuse import TorchnativeNotImplementedError
from ..platform.pybind_errors import incompatible_arguments

_ASSERT = ('r INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/core/jit_type_base.h"'
           ':{}, please report a bug to PyTorch. ')

# c10::TypeKind declaration order: UnionType sorts its members by it (then by str).
_KIND_ORDER = {k: i for i, k in enumerate((
    "AnyType EnumType AnyEnumType TensorType StorageType TupleType ListType DictType NumberType "
    "FloatType ComplexType FutureType AwaitType RRefType IntType NoneType StringType GeneratorType "
    "QuantizerType BoolType OptionalType VarType DeviceObjType StreamObjType FunctionType ClassType "
    "PyObjectType CapsuleType InterfaceType QSchemeType ScalarTypeType LayoutType MemoryFormatType "
    "AnyListType AnyTupleType AnyClassType SymIntType SymFloatType SymBoolType UnionType "
    "DynamicType").split())}

# ScalarType index <-> names come from the dtype table (csrc/core/dtypes.py, generated from upstream):
# STR_TO_DTYPE is c10::getStringToDtypeMap() (every Python name of a dtype -> its ScalarType).
STR_TO_DTYPE = {name: d._index for name, d in _dtypes.TORCH_ATTRS.items()}


def _no_ctor(cls):
    raise TypeError(f"torch._C.{cls.__name__}: No constructor defined!")


def _new(cls, kind, s, ann):
    t = object.__new__(cls)
    t._kind, t._str, t._ann = kind, s, ann
    return t


class Type:
    """Base of all JIT types (``torch._C.Type``); not constructible from Python."""

    __module__ = "torch"
    __slots__ = ("_kind", "_str", "_ann", "__weakref__")
    __hash__ = None  # upstream defines __eq__ only, so types are unhashable
    _parts = None  # component types; composite kinds have it as a slot

    def __new__(cls, *args, **kwargs):
        _no_ctor(cls)

    def __reduce_ex__(self, protocol):
        raise TypeError(f"cannot pickle 'torch._C.{type(self).__name__}' object")

    def __getattr__(self, name):  # only reached for missing names: pybind's message spelling
        raise AttributeError(f"'torch._C.{type(self).__name__}' object has no attribute '{name}'")

    # -- naming --------------------------------------------------------------------------------
    def __repr__(self):
        return self._ann

    @property
    def annotation_str(self):
        return self._ann

    def kind(self):
        return self._kind

    def str(self):
        return _ostream(self)

    def containedTypes(self):
        return list(_contained(self))

    # -- relations -----------------------------------------------------------------------------
    def __eq__(self, other):
        if other is None:
            return False
        if not isinstance(other, Type):
            raise incompatible_arguments(
                "__eq__", ["(self: torch._C.Type, arg0: torch._C.Type) -> bool"], (self, other))
        return type_equal(self, other)

    def isSubtypeOf(self, other):
        return other is not None and is_subtype(self, other)

    def is_interface_type(self):
        return False

    def requires_grad(self):
        return any(t.requires_grad() for t in _contained(self))

    # -- TensorType refinements (upstream binds them on Type and asserts the kind) -----------
    def _tensor(self, line):
        if not isinstance(self, TensorType):
            raise RuntimeError(_ASSERT.format(line))
        return self

    def dim(self):
        s = self._tensor(433)._sizes
        return None if s is None else len(s)

    def undefined(self):
        return self._tensor(433)._undefined

    def sizes(self):
        s = self._tensor(421)._sizes
        return None if s is None or None in s else list(s)

    def symbolic_sizes(self):
        s = self._tensor(421)._sizes
        return None if s is None else [-1 if d is None else d for d in s]

    def varyingSizes(self):
        s = self._tensor(421)._sizes
        return None if s is None else list(s)

    def strides(self):
        s = self._tensor(421)._strides
        return None if s is None or None in s else list(s)

    def with_sizes(self, sizes):
        t = self._tensor(421)
        return t._refine(_sizes=None if sizes is None else tuple(sizes),
                         _strides=None if sizes is None else (None,) * len(sizes))

    def contiguous(self):
        t = self._tensor(433)
        if t._sizes is None or None in t._sizes:
            raise RuntimeError('concrete_sizes.has_value() INTERNAL ASSERT FAILED at '
                               '"/__w/pytorch/pytorch/aten/src/ATen/core/jit_type.h":725, please '
                               'report a bug to PyTorch. ')
        strides, acc = [], 1
        for d in reversed(t._sizes):
            strides.append(acc)
            acc *= max(d, 1)
        return t._refine(_strides=tuple(reversed(strides)))

    def scalarType(self):
        d = self._tensor(433)._dtype
        return None if d is None else _dtypes.ALL[d]._cpp_name

    def dtype(self):
        d = self._tensor(433)._dtype
        return None if d is None else _dtypes.ALL[d]

    def with_dtype(self, dtype):
        if not isinstance(dtype, _dtypes.dtype):
            raise TypeError(f"with_dtype(): expected a torch.dtype, got {dtype!r}")
        return self._tensor(421)._refine(_dtype=dtype._index)

    def device(self):
        d = self._tensor(433)._device
        if d is None:
            return None
        return _device(d)

    def with_device(self, device):
        return self._tensor(421)._refine(_device=str(device))


# ---------------------------------------------------------------------------------------------
# Singleton kinds
# ---------------------------------------------------------------------------------------------

def _singleton_class(name, kind, s, ann=None, module="torch"):
    cls = type(name, (Type,), {"__slots__": (), "__module__": module, "__qualname__": name})
    inst = _new(cls, kind, s, ann or s)
    cls.get = staticmethod(lambda: inst)
    return cls


AnyType = _singleton_class("AnyType", "AnyType", "Any")
NoneType = _singleton_class("NoneType", "NoneType", "NoneType")
BoolType = _singleton_class("BoolType", "BoolType", "bool")
FloatType = _singleton_class("FloatType", "FloatType", "float")
ComplexType = _singleton_class("ComplexType", "ComplexType", "complex")
IntType = _singleton_class("IntType", "IntType", "int")
SymIntType = _singleton_class("SymIntType", "SymIntType", "SymInt", "int")
SymBoolType = _singleton_class("SymBoolType", "SymBoolType", "SymBool", "bool")
NumberType = _singleton_class("NumberType", "NumberType", "Scalar", "number")
StringType = _singleton_class("StringType", "StringType", "str")
DeviceObjType = _singleton_class("DeviceObjType", "DeviceObjType", "Device")
_GeneratorType = _singleton_class("_GeneratorType", "GeneratorType", "Generator", module="torch._C")
StreamObjType = _singleton_class("StreamObjType", "StreamObjType", "Stream")
PyObjectType = _singleton_class("PyObjectType", "PyObjectType", "PyObject")

# Kinds without a Python class upstream: plain ``Type`` instances (kind, str == annotation).
_PLAIN = {k: _new(Type, k, s, s) for k, s in (
    ("ScalarTypeType", "ScalarType"), ("LayoutType", "Layout"), ("MemoryFormatType", "MemoryFormat"),
    ("StorageType", "Storage"), ("QSchemeType", "QScheme"), ("QuantizerType", "Quantizer"),
    ("CapsuleType", "Capsule"), ("AnyClassType", "AnyClassType"), ("AnyEnumType", "AnyEnumType"),
    ("AnyListType", "list"), ("AnyTupleType", "tuple"), ("SymFloatType", "SymFloat"))}
_PLAIN["SymFloatType"]._ann = "float"

_INTERN: dict = {}


def var_type(name: str) -> Type:
    """A type variable (``t``, ``t1``...) as schemas of ``aten::``/``prim::`` ops use them."""
    key = ("VarType", name)
    t = _INTERN.get(key)
    if t is None:
        t = _INTERN[key] = _new(Type, "VarType", name, name)
    return t


# ---------------------------------------------------------------------------------------------
# TensorType: unrefined singletons plus optional refinement (dtype, sizes, strides, device...)
# ---------------------------------------------------------------------------------------------

class TensorType(Type):
    __module__ = "torch"
    __slots__ = ("_dtype", "_sizes", "_strides", "_device", "_requires_grad", "_undefined",
                 "_inferred")

    @classmethod
    def get(cls):
        return _TENSOR

    @classmethod
    def getInferred(cls):
        return _TENSOR_INFERRED

    @staticmethod
    def create_from_tensor(t):
        return _TENSOR._refine(
            _dtype=t.dtype._index, _sizes=tuple(t.shape),
            _strides=tuple(t.stride()), _device=str(t.device),
            _requires_grad=bool(t.requires_grad), _undefined=False)

    def requires_grad(self):
        return True if self._requires_grad is None else self._requires_grad

    def _refine(self, **changes):
        t = _new(TensorType, "TensorType", "Tensor", "Tensor")
        for f in TensorType.__slots__:
            setattr(t, f, changes.get(f, getattr(self, f)))
        t._inferred = False
        return t

    def _fields(self):
        return (self._dtype, self._sizes, self._strides, self._device, self._requires_grad,
                self._undefined)


def _tensor_singleton(inferred):
    t = _new(TensorType, "TensorType", "Tensor", "Tensor")
    t._dtype = t._sizes = t._strides = t._device = t._requires_grad = None
    t._undefined, t._inferred = False, inferred  # TensorType::get() says "not undefined"
    return t


_TENSOR = _tensor_singleton(False)
_TENSOR_INFERRED = _tensor_singleton(True)


def _tensor_ostream(t: TensorType) -> str:
    """C++ ``operator<<`` for a (possibly refined) TensorType, default verbosity (Full)."""
    if t._dtype is not None:
        out = _dtypes.ALL[t._dtype]._cpp_name + ("Tensor" if t._sizes is None else "")
    else:
        out = "Tensor"
    extras = []
    if t._requires_grad is not None:
        extras.append(f"requires_grad={int(t._requires_grad)}")
    if t._device is not None:
        extras.append(f"device={t._device}")
    if t._sizes is not None:
        parts = ["*" if d is None else str(d) for d in t._sizes]
        st = t._strides
        if t._sizes and st is not None and len(st) == len(t._sizes) and None not in st:
            parts.append("strides=[" + ", ".join(map(str, st)) + "]")
        out += "(" + ", ".join(parts + extras) + ")"
    elif extras:
        out += "(" + ", ".join(extras) + ")"
    if t._undefined:
        out += "[Undefined]"
    return out


# ---------------------------------------------------------------------------------------------
# Composite kinds (interned on their components)
# ---------------------------------------------------------------------------------------------

def _interned(cls, kind, parts, make):
    key = (kind, *map(id, parts))
    t = _INTERN.get(key)
    if t is None:
        for p in parts:
            if p is None or not isinstance(p, Type):
                what = {"TupleType": "tuple", "ListType": "ListType"}.get(kind, kind)
                raise RuntimeError(f"Can not create {what} with None type")
        t = _INTERN[key] = make()
        t._parts = tuple(parts)
    return t


class ListType(Type):
    __module__ = "torch"
    __slots__ = ("_parts",)

    def __new__(cls, a):
        return list_of(a)

    def getElementType(self):
        return self._parts[0]

    ofInts = staticmethod(lambda: list_of(IntType.get()))
    ofTensors = staticmethod(lambda: list_of(_TENSOR))
    ofFloats = staticmethod(lambda: list_of(FloatType.get()))
    ofComplexDoubles = staticmethod(lambda: list_of(ComplexType.get()))
    ofBools = staticmethod(lambda: list_of(BoolType.get()))
    ofStrings = staticmethod(lambda: list_of(StringType.get()))


def list_of(e: Type) -> ListType:
    return _interned(ListType, "ListType", (e,), lambda: _new(
        ListType, "ListType", e._str + "[]", f"List[{e._ann}]"))


class OptionalType(Type):
    __module__ = "torch"
    __slots__ = ("_parts",)

    def __new__(cls, a):
        return optional_of(a)

    def getElementType(self):
        return self._parts[0]

    ofTensor = staticmethod(lambda: optional_of(_TENSOR))


def optional_of(e: Type) -> OptionalType:
    if isinstance(e, OptionalType):  # Optional[Optional[T]] flattens to Optional[T]
        return e
    return _interned(OptionalType, "OptionalType", (e,), lambda: _new(
        OptionalType, "OptionalType", e._str + "?", f"Optional[{e._ann}]"))


class TupleType(Type):
    __module__ = "torch"
    __slots__ = ("_parts",)

    def __new__(cls, a):
        return tuple_of(list(a))

    def elements(self):
        return list(self._parts)


def tuple_of(elems) -> TupleType:
    elems = tuple(elems)
    return _interned(TupleType, "TupleType", elems, lambda: _new(
        TupleType, "TupleType", "(" + ", ".join(e._str for e in elems) + ")",
        "Tuple[" + (", ".join(e._ann for e in elems) if elems else "()") + "]"))


class DictType(Type):
    __module__ = "torch"
    __slots__ = ("_parts",)

    def __new__(cls, key, value):
        return dict_of(key, value)

    def getKeyType(self):
        return self._parts[0]

    def getValueType(self):
        return self._parts[1]


_DICT_KEYS = frozenset(("AnyType", "IntType", "BoolType", "FloatType", "ComplexType", "StringType",
                        "TensorType", "DeviceObjType"))


def dict_of(k: Type, v: Type) -> DictType:
    if k is not None and k._kind not in _DICT_KEYS:
        raise RuntimeError(f"Cannot create dict for key type '{k._str}', only int, float, complex, "
                           "Tensor, device and string keys are supported")
    return _interned(DictType, "DictType", (k, v), lambda: _new(
        DictType, "DictType", f"Dict({k._str}, {v._str})", f"Dict[{k._ann}, {v._ann}]"))


def _wrapper_class(name):
    cls = type(name, (Type,), {"__slots__": ("_parts",), "__module__": "torch", "__qualname__": name,
                               "__new__": lambda c, a: _wrap(c, a),
                               "getElementType": lambda self: self._parts[0]})
    return cls


def _wrap(cls, e):
    n = cls.__name__[:-4]
    return _interned(cls, cls.__name__, (e,), lambda: _new(
        cls, cls.__name__, f"{n}({e._str})", f"{n}[{e._ann}]"))


FutureType = _wrapper_class("FutureType")
AwaitType = _wrapper_class("AwaitType")
RRefType = _wrapper_class("RRefType")


def future_of(e):
    return _wrap(FutureType, e)


def await_of(e):
    return _wrap(AwaitType, e)


def rref_of(e):
    return _wrap(RRefType, e)


class UnionType(Type):
    __module__ = "torch"
    __slots__ = ("_parts",)

    def __new__(cls, a):
        return union_of(list(a))


def union_of(types) -> Type:
    """``UnionType::create``: flatten, drop duplicates and subsumed members, sort; a union of
    one type plus None is an Optional."""
    flat = []
    for t in types:
        if t is None:
            raise RuntimeError("Can not create UnionType with None type")
        members = (t._parts[0], NoneType.get()) if isinstance(t, OptionalType) else (
            t._parts if isinstance(t, UnionType) else (t,))
        for m in members:
            if not any(type_equal(m, f) for f in flat):
                flat.append(m)
    kept = [t for t in flat if not any(u is not t and t._kind != "AnyType" and is_subtype(t, u)
                                       and not is_subtype(u, t) for u in flat)]
    if len(kept) == 1:
        raise RuntimeError(
            'false INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/src/ATen/core/union_type.cpp'
            '":210, please report a bug to PyTorch. After type unification was performed, the Union '
            "with the original types {" + "".join(t._ann + " " for t in flat) + "} has the single "
            f"type {kept[0]._ann}. Use the common supertype instead of creating a Uniontype")
    nones = [t for t in kept if t._kind == "NoneType"]
    if len(kept) == 2 and nones:
        return optional_of(next(t for t in kept if t._kind != "NoneType"))
    kept.sort(key=lambda t: (_KIND_ORDER[t._kind], t._str))
    return _interned(UnionType, "UnionType", kept, lambda: _new(
        UnionType, "UnionType", "Union(" + ", ".join(t._str for t in kept) + ")",
        "Union[" + ", ".join(t._ann for t in kept) + "]"))


class ClassType(Type):
    """A TorchScript class; here only registered custom classes (``__torch__.torch.classes.*``)."""

    __module__ = "torch"
    __slots__ = ()

    def __new__(cls, qualified_name):
        raise TorchnativeNotImplementedError(
            "torch._C.ClassType", "TorchScript compilation units are not implemented in torchnative")

    def name(self):
        return self._str.rpartition(".")[2]

    def qualified_name(self):
        return self._str

    def method_names(self):
        raise TorchnativeNotImplementedError("torch._C.ClassType.method_names",
                                             "custom class methods are not implemented in torchnative")


def class_type(qualified_name: str) -> ClassType:
    key = ("ClassType", qualified_name)
    t = _INTERN.get(key)
    if t is None:
        t = _INTERN[key] = _new(ClassType, "ClassType", qualified_name, qualified_name)
    return t


# ---------------------------------------------------------------------------------------------
# Structure: contained types, equality, subtyping, operator<<
# ---------------------------------------------------------------------------------------------

def _contained(t):
    if t._kind == "ClassType":  # a custom class holds its C++ object as one Capsule attribute
        return (_PLAIN["CapsuleType"],)
    return t._parts or ()


def type_equal(a: Type, b: Type) -> bool:
    if a is b:
        return True
    if a._kind != b._kind:
        return False
    if isinstance(a, TensorType):
        return a._fields() == b._fields()
    pa, pb = a._parts, b._parts
    if pa is None or pb is None:  # leaf kinds: singletons, or named (ClassType)
        return a._kind == "VarType" or a._str == b._str  # upstream: any two type variables are equal
    return len(pa) == len(pb) and all(type_equal(x, y) for x, y in zip(pa, pb))


def type_hash(t: Type) -> int:
    """A hash consistent with :func:`type_equal` (types themselves are unhashable upstream)."""
    if t._parts is None:
        return hash((t._kind, None if t._kind in ("VarType", "TensorType") else t._str))
    return hash((t._kind, tuple(map(type_hash, t._parts))))


def _members(t):
    """The alternatives of a union-like type (Optional[T] is Union[T, None])."""
    if isinstance(t, OptionalType):
        return (t._parts[0], NoneType.get())
    return t._parts


def is_subtype(a: Type, b: Type) -> bool:
    """``Type::isSubtypeOfExt`` for the kinds schemas use."""
    if a is b or type_equal(a, b):
        return True
    ak, bk = a._kind, b._kind
    if ak in ("OptionalType", "UnionType"):
        return bk == "AnyType" or all(is_subtype(m, b) for m in _members(a))
    if bk == "AnyType":
        return True
    if bk in ("OptionalType", "UnionType"):
        return any(is_subtype(a, m) for m in _members(b))
    if bk == "NumberType":
        return ak in ("IntType", "FloatType", "ComplexType")
    if ak == "TensorType" and bk == "TensorType":
        # b is a supertype when every refinement it has, a has too
        for fa, fb in zip(a._fields(), b._fields()):
            if fb is None:
                continue
            if isinstance(fb, tuple):
                if fa is None or len(fa) != len(fb) or any(
                        y is not None and x != y for x, y in zip(fa, fb)):
                    return False
            elif fa != fb:
                return False
        return True
    if ak == bk and ak in ("TupleType", "FutureType", "AwaitType"):
        return len(a._parts) == len(b._parts) and all(
            is_subtype(x, y) for x, y in zip(a._parts, b._parts))
    return (ak, bk) in (("ListType", "AnyListType"), ("TupleType", "AnyTupleType"),
                        ("ClassType", "AnyClassType"))


def _ostream(t: Type) -> str:
    """C++ ``operator<<(ostream&, const Type&)`` (the Python ``.str()`` method)."""
    k = t._kind
    if k == "TensorType":
        return _tensor_ostream(t)
    if k == "ListType":
        return _ostream(t._parts[0]) + "[]"
    if k == "OptionalType":
        return _ostream(t._parts[0]) + "?"
    if k in ("FutureType", "RRefType"):
        return f"{k[:-4]}[{_ostream(t._parts[0])}]"
    if k == "TupleType":
        return "(" + ", ".join(_ostream(e) for e in t._parts) + ")"
    return t._str


# Schema type names (SchemaTypeParser::parseBaseType) -> (real type, fake type). The fake type
# (``Argument.type``) is int for enum-like kinds and SymInt, as upstream's Python sees them.
BASE_TYPES = {
    "Generator": _GeneratorType.get(), "ScalarType": _PLAIN["ScalarTypeType"],
    "Layout": _PLAIN["LayoutType"], "MemoryFormat": _PLAIN["MemoryFormatType"],
    "Storage": _PLAIN["StorageType"], "QScheme": _PLAIN["QSchemeType"],
    "Quantizer": _PLAIN["QuantizerType"], "ConstQuantizerPtr": IntType.get(),
    "Device": DeviceObjType.get(), "DeviceIndex": IntType.get(), "Stream": StreamObjType.get(),
    "Scalar": NumberType.get(), "str": StringType.get(), "float": FloatType.get(),
    "complex": ComplexType.get(), "int": IntType.get(), "SymInt": SymIntType.get(),
    "bool": BoolType.get(), "SymBool": SymBoolType.get(), "None": NoneType.get(),
    "NoneType": NoneType.get(), "Capsule": _PLAIN["CapsuleType"], "Any": AnyType.get(),
    "AnyClassType": _PLAIN["AnyClassType"], "AnyEnumType": _PLAIN["AnyEnumType"],
}
FAKE_AS_INT = frozenset(("ScalarTypeType", "MemoryFormatType", "LayoutType", "SymIntType"))

# The classes upstream's torch._C exposes (name -> class).
PUBLIC_TYPES = {c.__name__: c for c in (
    Type, AnyType, NoneType, BoolType, FloatType, ComplexType, IntType, SymIntType, SymBoolType,
    NumberType, StringType, DeviceObjType, _GeneratorType, StreamObjType, PyObjectType, TensorType,
    ListType, OptionalType, TupleType, DictType, FutureType, AwaitType, RRefType, UnionType,
    ClassType)}
