"""Python-binding bugs found in use, each compared with upstream in a separate process."""
from __future__ import annotations

from bugfix_probe import assert_agree

META = "c = torch.tensor(True, device='meta'); m = torch.tensor(2., device='meta')\n"

SCALAR_AFTER_MATCH = {
    # a 0-dim tensor where an earlier signature has a Scalar: converted only once a signature
    # has matched, so a meta tensor (no value) reaches the Tensor overload
    "where_tensor_scalar": "torch.where(c, m, 0)",
    "where_scalar_tensor": "torch.where(c, 0, m)",
    "where_tensors": "torch.where(c, m, m)",
    "where_cpu": "torch.where(torch.tensor([True, False]), torch.tensor([1., 2.]), torch.tensor(7.))",
    "where_cpu_scalar": "torch.where(torch.tensor([True, False]), torch.tensor(3.), 0)",
    "add_alpha": "torch.add(torch.ones(2), torch.tensor(3.), alpha=2)",
    "pow_meta": "torch.pow(m, 2)",
    "clamp_meta": "torch.clamp(torch.empty(3, device='meta'), min=m)",
    "add_meta_to_cpu": "torch.ones(2).add(m)",
}


def test_scalar_parameters_convert_after_the_match():
    assert_agree(SCALAR_AFTER_MATCH, setup=META)


LOGGING_SUBCLASS = '''
seen = []

class Logged(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        seen.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})

class Mode(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        seen.append(getattr(func, "__name__", str(func)))
        return func(*args, **(kwargs or {}))

def getter(name, base=None, value=True):
    t = (torch.randn(2, 2) if base is None else base).as_subclass(Logged)
    seen.clear()
    got = getattr(t, name)
    return [list(seen), type(got).__name__ if value else None]

def under_mode(name):
    t = torch.randn(2, 2, dtype=torch.complex64)
    seen.clear()
    with Mode():
        getattr(t, name)
    return list(seen)
'''

PROPERTIES = (
    "T", "H", "mT", "mH", "real", "grad", "grad_fn", "requires_grad", "is_leaf",
    "retains_grad", "output_nr", "_version", "_backward_hooks",
    "_post_accumulate_grad_hooks", "name", "volatile", "shape", "dtype", "device", "layout",
    "ndim", "nbytes", "itemsize", "is_cpu", "is_cuda", "is_meta", "is_nested", "is_quantized",
    "is_sparse", "is_sparse_csr", "is_mkldnn", "is_mps", "is_xla", "is_xpu", "data")
GETTER_CASES = {p: f"getter({p!r})" for p in PROPERTIES}
GETTER_CASES.update({
    # who sees the getter only: the values differ for other reasons (see the report)
    "grad_dtype": "getter('grad_dtype', value=False)",
    "_base": "getter('_base', value=False)",
    "imag_complex": "getter('imag', torch.randn(2, dtype=torch.complex64))",
    "real_complex": "getter('real', torch.randn(2, dtype=torch.complex64))",
    "mode_T": "under_mode('T')",
    "mode_imag": "under_mode('imag')",
    "mode_shape": "under_mode('shape')",
    "mode_grad": "under_mode('grad')",
})


def test_property_getters_honour_torch_function():
    assert_agree(GETTER_CASES, setup=LOGGING_SUBCLASS)


AS_SUBCLASS_SETUP = '''
from torch.utils._python_dispatch import TorchDispatchMode

class S(torch.Tensor):
    pass

class Slotted(torch.Tensor):
    __slots__ = ("tag",)

class Seen(TorchDispatchMode):
    ops = []
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))

x = torch.arange(3.).requires_grad_()
z = x * 2

def view_facts(cls, t):
    y = t.as_subclass(cls)
    return [type(y).__name__, y._base is t, type(y.grad_fn).__name__, y.requires_grad, y._is_view()]

def in_place_through(cls):
    y = (x * 1).as_subclass(cls)
    y.mul_(3)
    y.sum().backward()
    g = x.grad.tolist()
    x.grad = None
    return [type(y.grad_fn).__name__, g]

def under_mode():
    with Seen():
        x.detach().as_subclass(S)
    return Seen.ops
'''

AS_SUBCLASS = {
    # an alias of self (a view: _base, AliasBackward0), as python_variable.cpp makes it
    "leaf": "view_facts(S, x)",
    "nonleaf": "view_facts(S, z)",
    "slotted": "view_facts(Slotted, z)",
    "to_tensor": "view_facts(torch.Tensor, z)",
    "in_place": "in_place_through(S)",
    "in_place_slotted": "in_place_through(Slotted)",
    "no_grad": "(lambda: [torch.set_grad_enabled(False), view_facts(S, x), torch.set_grad_enabled(True)][1])()",
    "modes_stashed": "under_mode()",
    "not_a_type": "x.as_subclass(3)",
    "not_a_tensor": "x.as_subclass(int)",
}


def test_as_subclass_is_an_alias():
    assert_agree(AS_SUBCLASS, setup=AS_SUBCLASS_SETUP)


INT_LIST_PARAMETERS = {
    # a lone int or one-element integral tensor binds to an int list only where the list has a
    # size (int[1]) or through varargs; otherwise the next overload (a Tensor one) takes it
    "tensor_split_0d": "len(torch.tensor_split(torch.arange(5.), torch.tensor(1)))",
    "tensor_split_0d_two": "len(torch.arange(5.).tensor_split(torch.tensor(2)))",
    "tensor_split_1d": "len(torch.tensor_split(torch.arange(5.), torch.tensor([1])))",
    "zeros_varargs_0d": "torch.zeros(torch.tensor(3))",
    "resize_varargs_1d": "torch.ones(2).resize_(torch.tensor([3])).shape",
    "view_varargs_0d": "torch.ones(2, 3).view(torch.tensor(6))",
    "sum_sized_list": "torch.ones(2, 3).sum(torch.tensor(1))",
    "view_two_elements": "torch.ones(2, 3).view(torch.tensor([2, 3]))",
    "zeros_varargs_bool": "torch.zeros(torch.tensor([True]))",
}


def test_int_list_parameters_take_tensors_as_upstream():
    assert_agree(INT_LIST_PARAMETERS)


BIT_QUERIES = {
    # is_conj/is_neg are CompositeImplicitAutograd: torch.ops calls answer about the bit instead
    # of the fallback resolving it first
    "ops_is_conj": "torch.ops.aten.is_conj(torch.ones(2, dtype=torch.complex64).conj())",
    "ops_is_neg": "torch.ops.aten.is_neg(torch.ones(2)._neg_view())",
    "method_is_conj": "torch.ones(2, dtype=torch.complex64).conj().is_conj()",
    "plain": "torch.ops.aten.is_conj(torch.ones(2, dtype=torch.complex64))",
}


def test_bit_queries_see_the_bits():
    assert_agree(BIT_QUERIES)
