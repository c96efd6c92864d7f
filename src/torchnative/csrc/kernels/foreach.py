"""``_foreach_*`` kernels: the per-tensor operator applied to each tensor of the lists.

This is upstream's CPU path (the ``foreach_tensor_*_kernel_slow`` functions in
aten/src/ATen/native/ForeachOpsKernels.cpp): each element calls the ordinary operator, so values
agree with the for-loop path bit for bit. The per-tensor operators are called through the door, so
in-place ones bump each tensor's version counter as upstream does.
"""

from __future__ import annotations

from ..ops.kernel_registry import kernel


def _call(name, *args, **kwargs):
    from ..dispatch.call import call

    return call(name, *args, **kwargs)


def _check_lengths(*lists):
    n = len(lists[0])
    if n == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in lists[1:]:
        if len(other) != n:
            raise RuntimeError(f"Tensor lists must have the same number of tensors, got {n} and "
                               f"{len(other)}")


def _register(base: str, overload: str, functional: str | None, inplace: str | None, shape):
    """Register _foreach_<base>.<overload> and _foreach_<base>_.<overload>.

    ``shape`` maps (i, self, args, kwargs) to the per-tensor call's arguments."""
    suffix = f".{overload}" if overload else ""

    if functional is not None:
        @kernel(f"_foreach_{base}{suffix}")
        def out_of_place(self, *args, **kwargs):
            lists = [self] + [a for a in args if isinstance(a, (list, tuple))]
            _check_lengths(*lists)
            out = []
            for i in range(len(self)):
                a, kw = shape(i, self, args, kwargs)
                out.append(_call(functional, *a, **kw))
            return out

    if inplace is not None:
        @kernel(f"_foreach_{base}_{suffix}")
        def in_place(self, *args, **kwargs):
            lists = [self] + [a for a in args if isinstance(a, (list, tuple))]
            _check_lengths(*lists)
            for i in range(len(self)):
                a, kw = shape(i, self, args, kwargs)
                _call(inplace, *a, **kw)


def _list(i, s, a, k):
    return (s[i], a[0][i]), k


def _scalar(i, s, a, k):
    return (s[i], a[0]), k


def _scalars(i, s, a, k):
    return (s[i], a[0][i]), k


def _tensor(i, s, a, k):
    return (s[i], a[0]), k


def _unary(i, s, a, k):
    return (s[i],), k


# binary arithmetic: per-tensor (functional, in-place) overloads for each foreach overload
for _op in ("add", "sub", "mul", "div"):
    _register(_op, "List", f"{_op}.Tensor", f"{_op}_.Tensor", _list)
    _register(_op, "Scalar", f"{_op}.Scalar", f"{_op}_.Scalar", _scalar)
    _register(_op, "ScalarList", f"{_op}.Scalar", f"{_op}_.Scalar", _scalars)
    if _op != "sub":
        _register(_op, "Tensor", f"{_op}.Tensor", f"{_op}_.Tensor", _tensor)

for _op, _scalar_op in (("clamp_min", "clamp_min"), ("clamp_max", "clamp_max"),
                        ("maximum", "clamp_min"), ("minimum", "clamp_max")):
    _list_op = {"clamp_min": "clamp_min.Tensor", "clamp_max": "clamp_max.Tensor",
                "maximum": "maximum", "minimum": "minimum"}[_op]
    _list_ip = {"clamp_min": "clamp_min_.Tensor", "clamp_max": "clamp_max_.Tensor",
                "maximum": None, "minimum": None}[_op]
    _register(_op, "List", _list_op, _list_ip, _list)
    _register(_op, "Scalar", _scalar_op, f"{_scalar_op}_", _scalar)
    _register(_op, "ScalarList", _scalar_op, f"{_scalar_op}_", _scalars)


def _maximum_inplace_list(base):
    # maximum/minimum have no in-place operator: compute, then copy into self (upstream's slow
    # path does the same: ``t.copy_(at::maximum(t, other))``)
    @kernel(f"_foreach_{base}_.List")
    def in_place(self, other):
        _check_lengths(self, other)
        for t, o in zip(self, other):
            _call("copy_", t, _call(base, t, o))


_maximum_inplace_list("maximum")
_maximum_inplace_list("minimum")


def _pointwise3(i, s, a, k):
    return (s[i], a[0][i], a[1][i]), {"value": a[2] if len(a) > 2 else k.get("value", 1)}


def _pointwise3_list(i, s, a, k):
    return (s[i], a[0][i], a[1][i]), {"value": a[2][i]}


def _pointwise3_tensor(i, s, a, k):
    return (s[i], a[0][i], a[1][i]), {"value": a[2].tolist()[i]}


for _op in ("addcmul", "addcdiv"):
    _register(_op, "Scalar", _op, f"{_op}_", _pointwise3)
    _register(_op, "ScalarList", _op, f"{_op}_", _pointwise3_list)
    _register(_op, "Tensor", _op, f"{_op}_", _pointwise3_tensor)


def _lerp_list(i, s, a, k):
    return (s[i], a[0][i], a[1][i]), {}


def _lerp_scalar(i, s, a, k):
    return (s[i], a[0][i], a[1]), {}


def _lerp_scalars(i, s, a, k):
    return (s[i], a[0][i], a[1][i]), {}


_register("lerp", "List", "lerp.Tensor", "lerp_.Tensor", _lerp_list)
_register("lerp", "Scalar", "lerp.Scalar", "lerp_.Scalar", _lerp_scalar)
_register("lerp", "ScalarList", "lerp.Scalar", "lerp_.Scalar", _lerp_scalars)

_register("pow", "List", "pow.Tensor_Tensor", "pow_.Tensor", _list)
_register("pow", "Scalar", "pow.Tensor_Scalar", "pow_.Scalar", _scalar)
_register("pow", "ScalarList", "pow.Tensor_Scalar", "pow_.Scalar", _scalars)


@kernel("_foreach_pow.ScalarAndTensor")
def _pow_scalar_and_tensor(self, exponent):
    return [_call("pow.Scalar", self, e) for e in exponent]


for _op in ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
            "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
            "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc"):
    _register(_op, "", _op, f"{_op}_", _unary)


@kernel("_foreach_zero_")
def _zero_(self):
    for t in self:
        _call("zero_", t)


@kernel("_foreach_copy_")
def _copy_(self, src, non_blocking=False):
    _check_lengths(self, src)
    for t, s in zip(self, src):
        _call("copy_", t, s, non_blocking)


@kernel("_foreach_copy")
def _copy(self, src, non_blocking=False):
    _check_lengths(self, src)
    return [_call("copy", t, s, non_blocking) for t, s in zip(self, src)]


@kernel("_foreach_clone")
def _clone(self, memory_format=None):
    return [_call("clone", t, memory_format=memory_format) for t in self]


@kernel("_foreach_norm.Scalar")
def _norm(self, ord=2, dtype=None):
    return [_call("linalg_vector_norm", t, ord, dtype=dtype) for t in self]


@kernel("_foreach_max")
def _max(self):
    return [_call("max", t) for t in self]


@kernel("_foreach_powsum.Scalar")
def _powsum(self, ord=2, dtype=None):
    """sum(|t| ** ord) per tensor (in ``dtype`` if given). ord=0 counts every element (|0|**0 is
    1) and an infinite ord gives inf, as upstream's. Upstream accumulates as its norm kernel does
    (in order, without the final root); ours sums pairwise, so the last bits may differ."""
    _check_lengths(self)
    out = []
    for t in self:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise NotImplementedError(f'"powsum_cpu" not implemented for \'{t.dtype._cpp_name}\'')
        a = _call("abs", t)
        if dtype is not None:
            a = _call("_to_copy", a, dtype=dtype)
        out.append(_call("sum", _call("pow.Tensor_Scalar", a, ord)))
    return out


@kernel("_foreach_mm")
def _mm(self, mat2):
    """Upstream's CPU fallback: at::mm per pair."""
    _check_lengths(self, mat2)
    return [_call("mm", a, b) for a, b in zip(self, mat2)]


# --- record_function: torch.optim's step() (and the profiler) open and close a range ------------
# Upstream's kernels feed the profiler; torchnative has no profiler, so a range is a name only.

class _RecordFunction:
    __slots__ = ("name", "args")

    def __init__(self, name, args):
        self.name, self.args = name, args


@kernel("profiler::_record_function_enter_new")
def _record_function_enter_new(name, args=None):
    return _RecordFunction(name, args)


@kernel("profiler::_record_function_exit._RecordFunction")
def _record_function_exit(record):
    return None


def _expected(cond: str):
    return RuntimeError(f"Expected {cond} to be true, but got false.  (Could this error message be "
                        "improved?  If so, please report an enhancement request to PyTorch.)")


def group_tensors_by_device_and_dtype(tensorlistlist, with_indices=False):
    """torch._C._group_tensors_by_device_and_dtype: the foreach/fused optimizers' grouping, keyed by
    the first list's tensors (upstream's _group_tensors_by_first_tensors_device_and_dtype in
    ATen/native/ForeachUtils.h). An empty list stays empty in every group (Adam passes
    ``max_exp_avg_sqs=[]`` without amsgrad); None entries of the other lists are kept.

    Upstream keeps its groups in a hash map, so their order is the hash's; ours is first-seen.
    Groups are independent, so the order changes no result."""
    if not tensorlistlist:
        raise _expected("!nested_tensorlist.empty()")
    first = tensorlistlist[0]
    if not first:
        raise _expected("!nested_tensorlist[0].empty()")
    n = len(first)
    if not all(len(lst) == n or len(lst) == 0 for lst in tensorlistlist):
        raise _expected("std::all_of( nested_tensorlist.cbegin(), nested_tensorlist.cend(), "
                        "[&](const auto& tensorlist) -> bool { return tensorlist.size() == "
                        "num_tensors || tensorlist.size() == 0; })")
    groups: dict = {}
    for i, t in enumerate(first):
        if t is None:
            raise RuntimeError("Tensors of the first list of nested Tensor lists are supposed to "
                               f"be defined but the {i}-th Tensor is not.")
        key = (t.device, t.dtype)
        for lst in tensorlistlist[1:]:
            other = lst[i] if lst else None
            if other is not None and not _groupable(key, other):
                raise RuntimeError(
                    "Tensors of the same index must be on the same device and the same dtype "
                    "except `step` tensors that can be CPU and float32/64, and optimizer states "
                    "that can be bfloat16 for mixed-precision training")
        entry = groups.get(key)
        if entry is None:
            entry = groups[key] = ([[] for _ in tensorlistlist], [])
        for k, lst in enumerate(tensorlistlist):
            if lst:
                entry[0][k].append(lst[i])
        if with_indices:
            entry[1].append(i)
    return {k: (v[0], v[1]) for k, v in groups.items()}


def _groupable(key, t) -> bool:
    """May ``t`` ride in the group keyed (device, dtype)? Same device and dtype; or a float32/64
    tensor (a ``step``), on that device or on the CPU; or a bfloat16 optimizer state."""
    from ..core import dtypes as D

    device, dtype = key
    steps = (D.BY_NAME["float32"], D.BY_NAME["float64"])
    if t.device == device:
        return t.dtype is dtype or t.dtype in steps or t.dtype is D.BY_NAME["bfloat16"]
    if t.device.type == "cpu":
        return t.dtype in steps
    return False


TORCH_C = {"torch._C._group_tensors_by_device_and_dtype": group_tensors_by_device_and_dtype}
