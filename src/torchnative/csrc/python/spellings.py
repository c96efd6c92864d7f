"""Every Python spelling of an ATen operator, built from upstream's binding table.

``torch.add``, ``Tensor.add``, ``torch._C._nn.linear``, ``torch._C._linalg.linalg_norm`` ...:
one small function per Python name that hands its arguments and candidate signatures to the
door (``binding.call_function`` and ``binding.call_method``). Names we write by hand (properties,
``size``, ``__getitem__`` ...) are left to their modules; the rest of upstream's spellings all
land here.
"""

from __future__ import annotations

from ..ops.spellings_table import spellings
from .call_cache import NOT_SEQUENCES, _type_key, key_of

# namespace of the binding table -> the torch._C (sub)module that holds its functions
MODULES = {
    "torch": "torch._C._VariableFunctions",
    "torch.nn": "torch._C._nn",
    "torch.fft": "torch._C._fft",
    "torch.linalg": "torch._C._linalg",
    "torch.nested": "torch._C._nested",
    "torch.sparse": "torch._C._sparse",
    "torch.special": "torch._C._special",
}


def _with_keywords(key: tuple, kwargs: dict):
    """key_of's key for plain-typed arguments ``key`` and these keywords, or None where a
    keyword's value is a sequence (key_of's own path)."""
    if len(kwargs) == 1:  # the common one keyword (dim=, keepdim=): no tuples built to test it
        for name, value in kwargs.items():
            tp = type(value)
            return key + ((name, tp),) if tp in NOT_SEQUENCES else None
    types = tuple(map(type, kwargs.values()))
    return key + tuple(zip(kwargs, types)) if NOT_SEQUENCES.issuperset(types) else None


def make_function(name: str, sigs, module: str):
    from .binding import Spelling, call_function
    from ..core.torch_function import TLS as tf

    sp = Spelling(sigs, name)
    recipes = sp.recipes

    def fn(*args, **kwargs):
        # a recorded pattern of plain types under no torch function mode runs its recipe here
        # (binding.call_function's first branch, without its frame; the key is key_of's)
        if not (tf.stack and tf.state != 2):
            n = len(args)  # the key by arity: a tuple of map() costs three times these
            key = (type(args[0]), type(args[1])) if n == 2 else (type(args[0]),) if n == 1 \
                else tuple(map(type, args))
            recipe = None if kwargs else recipes.get(key)
            if recipe and recipe.run is not None:  # (bare types: none was a sequence)
                return recipe.run(None, args, kwargs)
            if NOT_SEQUENCES.issuperset(key):
                if kwargs:
                    recipe = recipes.get(_with_keywords(key, kwargs))
            else:  # a list or tuple argument (cat's tensors, a size): its elements' types too
                key = (_type_key(args[0]), _type_key(args[1])) if n == 2 else \
                    (_type_key(args[0]),) if n == 1 else tuple(map(_type_key, args))  # key_of's
                if kwargs:
                    key = _with_keywords(key, kwargs) or key_of(None, args, kwargs)
                recipe = recipes.get(key)
                if not (recipe and recipe.run is not None):
                    return call_function(fn, sp, args, kwargs, key)
            if recipe and recipe.run is not None:
                return recipe.run(None, args, kwargs)
        return call_function(fn, sp, args, kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__module__ = module
    return fn


def make_method(name: str, sigs):
    from .binding import Spelling, call_method
    from ..core.torch_function import TLS as tf

    sp = Spelling(sigs, name)
    recipes = sp.recipes

    def method(self, *args, **kwargs):
        # as make_function's: binding.call_method's first branch, without its frame
        if not (tf.stack and tf.state != 2):
            n = len(args)  # as make_function's
            key = (type(self), type(args[0]), type(args[1])) if n == 2 else \
                (type(self), type(args[0])) if n == 1 else (type(self),) if not n else \
                (type(self), *map(type, args))
            recipe = None if kwargs else recipes.get(key)
            if recipe and recipe.run is not None:  # (bare types: none was a sequence)
                return recipe.run(self, args, kwargs)
            if NOT_SEQUENCES.issuperset(key):
                if kwargs:
                    recipe = recipes.get(_with_keywords(key, kwargs))
            else:  # a list or tuple argument (a size): its elements' types too
                key = (type(self), _type_key(args[0])) if n == 1 else \
                    (_type_key(self), *map(_type_key, args))  # key_of's, as above
                if kwargs:
                    key = _with_keywords(key, kwargs) or key_of(self, args, kwargs)
                recipe = recipes.get(key)
                if not (recipe and recipe.run is not None):
                    return call_method(method, sp, self, args, kwargs, key)
            if recipe and recipe.run is not None:
                return recipe.run(self, args, kwargs)
        return call_method(method, sp, self, args, kwargs)

    method.__name__ = method.__qualname__ = name
    METHOD_SPELLINGS[method] = sp
    return method


_NO_KWARGS: dict = {}  # read only: a dunder's recipe takes no keyword

# generated Tensor method -> its Spelling (a binary dunder calls the binding without the
# method's own frame)
METHOD_SPELLINGS: dict = {}


def functions(namespace: str) -> dict[str, object]:
    module = {"torch": "torch", "torch.nn": "torch._C._nn"}.get(namespace, namespace)
    return {name: make_function(name, sigs, module)
            for name, sigs in spellings()["signatures"][namespace].items()}


def methods() -> dict[str, object]:
    from .manual_bindings import TENSOR_METHODS

    out = {name: make_method(name, sigs) for name, sigs in spellings()["signatures"]["Tensor"].items()}
    out.update(TENSOR_METHODS)
    return out


class _VariableFunctionsClass:
    """``torch._C._VariableFunctions``: an instance whose attributes become ``torch.*``."""

    def __init__(self, fns: dict):
        self.__dict__.update(fns)

    def __dir__(self):
        return list(self.__dict__)


# Python operators upstream's python_variable_methods.cpp binds to ATen methods. Binary ones
# turn a TypeError into NotImplemented so Python tries the reflected operator.
DUNDERS = {
    "__add__": "add", "__radd__": "add", "__iadd__": "add_", "__mul__": "mul",
    "__rmul__": "mul", "__imul__": "mul_", "__sub__": "sub", "__isub__": "sub_",
    "__div__": "div", "__truediv__": "div", "__idiv__": "div_", "__floordiv__": "floor_divide",
    "__ifloordiv__": "floor_divide_", "__mod__": "remainder", "__imod__": "remainder_",
    "__eq__": "eq", "__ne__": "ne", "__lt__": "lt", "__le__": "le", "__gt__": "gt",
    "__ge__": "ge", "__rand__": "bitwise_and", "__ror__": "bitwise_or",
    "__rxor__": "bitwise_xor", "__matmul__": "matmul",
}
UNARY_DUNDERS = {"__invert__": "bitwise_not"}


def _not_implemented_on_type_error(name: str, fn):
    from ..core.tensor import TensorBase
    from ..core.torch_function import TLS as tf, entry_point
    from .binding import call_method, not_a_tensor

    sp = METHOD_SPELLINGS.get(fn)
    if sp is None:  # a hand-written method
        def dunder(self, other):
            if not isinstance(self, TensorBase):  # checked first: not the operand's TypeError
                raise not_a_tensor(name, self)
            try:
                return fn(self, other)
            except TypeError:
                return NotImplemented
    else:
        recipes = sp.recipes

        def dunder(self, other):
            if not isinstance(self, TensorBase):  # checked first: not the operand's TypeError
                raise not_a_tensor(name, self)
            try:
                # what fn(self, other) does, its recipe's key made directly
                kind = type(other)
                if kind in NOT_SEQUENCES and not (tf.stack and tf.state != 2):
                    recipe = recipes.get((type(self), kind))
                    if recipe and recipe.run is not None:
                        return recipe.run(self, (other,), _NO_KWARGS)
                return call_method(fn, sp, self, (other,), {})
            except TypeError:
                return NotImplemented

    dunder.__name__ = dunder.__qualname__ = name
    return entry_point(dunder)


def install_methods(tensor_base: type) -> None:
    table = methods()
    from .manual_bindings import TENSOR_METHODS

    for name, fn in table.items():
        if name not in tensor_base.__dict__ or name in TENSOR_METHODS:
            setattr(tensor_base, name, fn)
    for name, target in DUNDERS.items():
        if name not in tensor_base.__dict__:
            setattr(tensor_base, name, _not_implemented_on_type_error(name, table[target]))
    for name, target in UNARY_DUNDERS.items():
        if name not in tensor_base.__dict__:
            setattr(tensor_base, name, table[target])


def torch_c_names() -> dict[str, object]:
    out: dict[str, object] = {}
    from .manual_bindings import TORCH_FUNCTIONS

    vf = _VariableFunctionsClass({**functions("torch"), **TORCH_FUNCTIONS})
    out["torch._C._VariableFunctions"] = vf
    out["torch._C._VariableFunctionsClass"] = _VariableFunctionsClass
    for ns, modname in MODULES.items():
        if ns == "torch":
            continue
        for name, fn in functions(ns).items():
            out[f"{modname}.{name}"] = fn
    return out

