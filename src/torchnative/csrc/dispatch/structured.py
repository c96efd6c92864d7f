"""In-place and ``out=`` overloads from a functional kernel, as upstream's structured kernels.

``add_(self, other)`` computes ``add(self, other)`` and writes it into ``self``; ``add.out``
writes it into ``out``, resizing an ``out`` of the wrong shape (with upstream's warning when it
had elements). In-place results must be castable to ``self``'s dtype, with upstream's message.

Which ``out`` dtypes are accepted depends on how upstream's C++ implements the ``out=``
overload (``out_rule``; it applies to the out= overloads served here, i.e. those without a kernel
of their own):

- ``cast``: TensorIterator kernels (``structured_inherits: TensorIteratorBase``) and the
  hand-written ones: the result dtype must be castable to ``out``'s ("result type Float can't be
  cast to the desired output type Long"); the result is cast.
- ``same``: TensorIterator kernels whose meta builds ``TensorIterator::unary_op`` (the
  dtype-preserving unary ops: neg, floor, round, sgn, the activations ...): ``out`` must have the
  result's dtype ("Found dtype Double but expected Float"), checked before resizing.
- ``structured``: the other structured kernels. ``set_output_raw_strided`` -> ``resize_out``
  checks that ``out`` has exactly the dtype the meta function chose ("Expected out tensor to have
  dtype float, but got double instead") before resizing; metas that take the dtype from ``out``
  (cumsum, sum, prod, mean: ``maybe_get_output()``) compute in it instead.
- ``generated``: out= overloads torchgen generates (``autogen:``; CompositeViewCopyKernels.cpp):
  the functional is called (a ``dtype`` the out= schema lacks comes from ``out``, as torchgen's
  translate supplies ``out.scalar_type()``), ``out`` is resized, then ``copy_arg`` checks the
  dtype exactly (the same message, after resizing).
"""

from __future__ import annotations

from ..core.mem_overlap import assert_no_internal_overlap, check_written
from ..core.promotion import can_cast
from ..core.tensor import TensorBase
from ..platform.torch_warn import torch_warn


def _check_cast(result_dtype, dest: TensorBase) -> None:
    if not can_cast(result_dtype, dest.dtype):
        raise RuntimeError(f"result type {result_dtype._cpp_name} can't be cast to the desired "
                           f"output type {dest.dtype._cpp_name}")


# c10's TypeMeta names (what ``Expected out tensor to have dtype ...`` prints)
_TYPEMETA = {
    "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
    "int8": "signed char", "uint8": "unsigned char", "int16": "short int", "int32": "int",
    "int64": "long int", "bool": "bool", "uint16": "short unsigned int",
    "uint32": "unsigned int", "uint64": "long unsigned int", "complex32": "c10::complex<c10::Half>",
    "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}


def typemeta_name(dt) -> str:
    return _TYPEMETA.get(dt._name) or f"c10::{dt._cpp_name}"


def _check_exact(result_dtype, dest: TensorBase) -> None:
    if result_dtype != dest.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {typemeta_name(result_dtype)}, but "
                           f"got {typemeta_name(dest.dtype)} instead")


def _check_same(result_dtype, dest: TensorBase) -> None:
    if result_dtype != dest.dtype:
        raise RuntimeError(f"Found dtype {dest.dtype._cpp_name} but expected "
                           f"{result_dtype._cpp_name}")


def _copy_not_loaded(dest, result):
    raise RuntimeError("no copy kernel: torchnative.csrc.kernels.copy was not imported")


# The copy kernel (kernels layer, above) installs itself here when imported.
_copy_into: list = [_copy_not_loaded]


def register_copy(copy_into) -> None:
    _copy_into[0] = copy_into


def write_into(dest: TensorBase, result: TensorBase) -> None:
    """Copy ``result`` into ``dest`` (same shape), casting as the copy kernel does."""
    _copy_into[0](dest, result)


def inplace_wrapper(functional, op):
    """An in-place kernel from a functional one: the result must have ``self``'s shape and be
    castable to its dtype, then it is copied into ``self`` (``op``: an operator or its name).
    A TensorIterator operation first refuses a ``self`` with internal overlap or an operand that
    partly overlaps it, as upstream's iterator does before anything else."""
    name = op if isinstance(op, str) else op.name
    ti = []  # decided on the first call: the table is not needed to import the kernels

    def inplace(self, *args, **kwargs):
        if not ti:
            ti.append(is_tensor_iterator(name))
        if ti[0]:
            check_written(self, args)
            if kwargs:
                check_written(self, kwargs.values())
        result = functional(self, *args, **kwargs)
        if tuple(result._size) != tuple(self._size):
            raise RuntimeError(f"output with shape {list(self._size)} doesn't match the broadcast "
                               f"shape {list(result._size)}")
        _check_cast(result.dtype, self)
        write_into(self, result)
        return self

    inplace.__name__ = name
    return inplace


def resize_out(out: TensorBase, shape) -> None:
    shape = tuple(shape)
    if tuple(out._size) == shape:
        return
    if out.numel() != 0:
        torch_warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(out._size)}, which does not match the required output shape {list(shape)}. "
            "This behavior is deprecated, and in a future PyTorch release outputs will not be "
            "resized unless they have zero elements. You can explicitly reuse an out tensor t by "
            "resizing it, inplace, to zero elements with t.resize_(0).")
    from .call import call

    call("resize_", out, list(shape))


# --- which rule an out= overload follows -------------------------------------------------------

# Structured TensorIterator kernels whose meta builds TensorIterator::unary_op (UnaryOps.cpp's
# CREATE_UNARY_META_FUNC and neg/trunc/floor/ceil/sign; Activation.cpp's build_unary_op metas;
# lerp's all-same-dtype iterator; the backward kernels that build an iterator over out and
# their inputs with the default all-same-dtype check: Loss.cpp's huber_loss_backward_out and
# binary_cross_entropy_backward_out_cpu, Activation.cpp's log_sigmoid_backward_cpu_out): out
# must have the input's dtype.
_SAME_DTYPE = frozenset((
    "bitwise_not.out", "frac.out", "round.out", "round.decimals_out", "sgn.out", "neg.out",
    "trunc.out", "floor.out", "ceil.out", "sign.out", "gelu.out", "hardshrink.out",
    "softshrink.out", "softplus.out", "silu.out", "mish.out", "elu.out", "leaky_relu.out",
    "hardsigmoid.out", "hardswish.out", "lerp.Tensor_out", "abs.out", "hardtanh.out",
    "huber_loss_backward.out", "binary_cross_entropy_backward.grad_input",
    "log_sigmoid_backward.grad_input",
))

# Structured metas that take the result dtype from a given out (maybe_get_output()): computed in
# out's dtype (the functional's ``dtype`` argument), with no dtype check.
_DTYPE_FROM_OUT = frozenset(("cumsum.out", "cumprod.out", "sum.IntList_out", "prod.int_out"))

# Structured metas whose own checks keep the castable rule (cat: "input types can't be cast";
# pow.Scalar_out / mean.out take out's dtype, then run a TensorIterator op into it).
_CAST = frozenset(("cat.out", "pow.Scalar_out", "mean.out"))

def _bool_out(name):
    def check(out, args):
        if out.dtype._name != "bool":
            raise RuntimeError(f"{name} does not support non-boolean outputs.")

    return check


def _heaviside(out, args):
    self, other = args[0], args[1]
    if self.dtype.is_complex or other.dtype.is_complex or out.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if self.dtype != other.dtype or out.dtype != self.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


# Metas that check out's dtype themselves, before computing (UnaryOps.cpp, BinaryOps.cpp).
_OUT_PRECHECK = {"signbit.out": _bool_out("signbit"), "isposinf.out": _bool_out("isposinf"),
                 "isneginf.out": _bool_out("isneginf"), "heaviside.out": _heaviside}

# out= overloads that are not structured but whose C++ builds a TensorIterator over out and
# the inputs (Loss.cpp, Activation.cpp): the iterator's overlap checks and resized-out layout
# (their dtype rule is _SAME_DTYPE's or the cast; binary_cross_entropy_backward's iterator runs
# over a squeezed view of out, which is not restrided, so it is not here)
_ITERATOR_OUTS = frozenset((
    "mse_loss_backward.grad_input", "huber_loss_backward.out", "smooth_l1_loss_backward.grad_input",
    "soft_margin_loss_backward.grad_input", "log_sigmoid_backward.grad_input",
    "hardtanh_backward.grad_input",
))

# pow.Scalar_out's meta sizes out (in out's dtype) before the TensorIterator's cast check
_RESIZE_FIRST = frozenset(("pow.Scalar_out",))


def _structured_kinds() -> dict:
    """{overload name: "ti" or "structured"} for upstream's structured kernels: their out=
    overloads and the functional and in-place overloads that delegate to them (from
    native_functions.yaml through torchgen, cached on disk like the operator table)."""
    from ..ops.native_functions import cached_generated

    def generate():
        from torchgen.gen import parse_native_yaml

        from ..ops.native_functions import yaml_paths

        yaml_path, tags_path, _ = yaml_paths()
        parsed = parse_native_yaml(str(yaml_path), str(tags_path))
        kinds = {str(f.func.name): ("ti" if f.structured_inherits == "TensorIteratorBase"
                                    else "structured")
                 for f in parsed.native_functions if f.structured}
        for f in parsed.native_functions:
            if f.structured_delegate is not None and str(f.structured_delegate) in kinds:
                kinds[str(f.func.name)] = kinds[str(f.structured_delegate)]
        return kinds

    global _KINDS
    if _KINDS is None:
        _KINDS = cached_generated("structured_kinds", generate)
    return _KINDS


def is_tensor_iterator(name: str) -> bool:
    """Whether upstream writes the overload ``name`` ("add_.Tensor", "aten::add.out") through a
    TensorIterator that checks its outputs' memory overlap: a structured TensorIterator kernel,
    or an in-place/out= form of another pointwise operator (relu_, nan_to_num_, where.self_out,
    the Scalar overloads that call their Tensor siblings...) but masked_fill's, which only warns
    about an expanded self."""
    short = name.split("::", 1)[-1]
    kind = _structured_kinds().get(short)
    if kind is not None:
        return kind == "ti"
    global _POINTWISE_WRITTEN
    if _POINTWISE_WRITTEN is None:
        from ..ops.native_functions import native_functions

        nfs = native_functions()
        pointwise = {f"{f.name}.{f.overload}".rstrip(".") for f in nfs if "pointwise" in f.tags}
        _POINTWISE_WRITTEN = frozenset(
            f"{f.name}.{f.overload}".rstrip(".") for f in nfs
            if f.kind in ("inplace", "out") and f.functional in pointwise
            and not f.name.startswith("masked_fill"))
    return short in _POINTWISE_WRITTEN


_POINTWISE_WRITTEN = None


_KINDS = None


def out_rule(op) -> str:
    """"cast", "same", "structured", "dtype_from_out" or "generated" (see the module docs)."""
    name = op.name.split("::", 1)[1]
    if name in _SAME_DTYPE:
        return "same"
    if name in _DTYPE_FROM_OUT:
        return "dtype_from_out"
    if name in _CAST:
        return "cast"
    nf = op.native
    if nf is not None and "generated" in nf.tags:
        return "generated"
    return "structured" if _structured_kinds().get(name) == "structured" else "cast"


def _kwarg_dtype(schema) -> bool:
    return any(a.name == "dtype" and a.kwarg_only for a in schema.arguments)


def out_wrapper(functional, op, functional_op):
    out_names = [a.name for a in op.schema.arguments if a.is_out]
    n_inputs = len([a for a in functional_op.schema.arguments])
    rule = out_rule(op)
    short = op.name.split("::", 1)[1]
    precheck = _OUT_PRECHECK.get(short)
    resize_first = rule == "generated" or short in _RESIZE_FIRST
    # a dtype the functional takes and the caller did not give comes from out (see module docs)
    dtype_from_out = _kwarg_dtype(functional_op.schema) and (
        rule == "dtype_from_out" or (rule == "generated" and not _kwarg_dtype(op.schema)))
    complex_to_float = op.name == "aten::abs.out"
    returns_nothing = not op.schema.returns
    ti = (rule != "generated" and is_tensor_iterator(op.name)) or short in _ITERATOR_OUTS
    check = {"cast": _check_cast, "same": _check_same, "structured": _check_exact,
             "dtype_from_out": _check_cast, "generated": _check_exact}[rule]

    def with_out(*args, **kwargs):
        outs = [kwargs.pop(n) for n in out_names]
        if ti:  # the iterator's overlap checks come before the meta function's
            for out in outs:
                check_written(out, args)
                check_written(out, kwargs.values())
        chk = check
        if complex_to_float and args and isinstance(args[0], TensorBase) and \
                args[0].dtype.is_complex:
            chk = _check_cast  # abs of a complex tensor: unary_op_impl_with_complex_to_float_out
        if precheck is not None:
            precheck(outs[0], args)
        if dtype_from_out and kwargs.get("dtype") is None:
            kwargs["dtype"] = outs[0].dtype
        result = functional(*args[:n_inputs], **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        for dest, res in zip(outs, results):
            if isinstance(dest, (list, tuple)):  # a Tensor[] out= (torchgen's list copy_arg)
                if len(dest) != len(res):
                    raise RuntimeError("dst.size() == src.size() INTERNAL ASSERT FAILED at "
                                       '"CompositeViewCopyKernels.cpp", please report a bug to PyTorch. ')
                pairs = zip(dest, res)
            else:
                pairs = ((dest, res),)
            for d, r in pairs:
                if not isinstance(r, TensorBase):
                    continue
                resized = tuple(d._size) != tuple(r._size)
                if resize_first:  # generated: resize_out_helper, then copy_arg's check
                    resize_out(d, r._size)
                    chk(r.dtype, d)
                    if rule == "generated":
                        assert_no_internal_overlap(d)  # the copy_ into out checks it
                else:
                    chk(r.dtype, d)
                    resize_out(d, r._size)
                if ti and resized and not r.is_contiguous():
                    # an iterator's resized output takes the layout it computed (its inputs'
                    # permutation), as set_output_raw_strided restrides it
                    from .call import call

                    call("as_strided_", d, list(r._size), list(r._stride), d._offset)
                write_into(d, r)
        if returns_nothing:  # "-> ()": the list out= overloads
            return None
        return tuple(outs) if isinstance(result, tuple) else outs[0]

    with_out.__name__ = op.name
    return with_out
