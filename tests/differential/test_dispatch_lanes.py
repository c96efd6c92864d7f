"""The shortcuts of the dispatch path (binding recipes, the door's plain-argument lane, lazy
storage) must never change what a call does: every observer upstream has (torch function modes,
subclasses, dispatch modes, autograd, meta tensors) still sees the call after the shortcut has
been taken for the same pattern."""

from __future__ import annotations

from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

from torchnative.csrc.dispatch import door


def _spelling(fn):
    return next(c.cell_contents for c in fn.__closure__ if hasattr(c.cell_contents, "recipes"))


def test_recipe_recorded_and_equal_to_full_parse():
    a, b = torch.rand(4, 4), torch.rand(4, 4)
    sp = _spelling(torch.Tensor.add)
    first = a.add(b, alpha=2)
    assert any(r for r in sp.recipes.values()), "the type-determined pattern was not recorded"
    again = a.add(b, alpha=2)
    assert torch.equal(first, again)
    assert torch.equal(again, a + 2 * b)


def test_recipes_leave_keyword_defaults_out():
    # a keyword-only argument at its schema default reaches the door as the boxed convention
    # hands it to modes (left out); one the caller sets is filled from the call
    a, b = torch.rand(3), torch.rand(3)
    sp = _spelling(torch.Tensor.add)
    a.add(b)
    assert sp.recipes[(type(a), type(b))].kw_const == {}
    a.add(b, alpha=2)
    assert sp.recipes[(type(a), type(b), ("alpha", int))].kw_fills
    assert torch.equal(a.add(b, alpha=2), a + 2 * b)


def test_value_dependent_pattern_is_not_recorded():
    # a tensor offered for a Scalar parameter: 0-dim is accepted, others are not
    sp = _spelling(torch.Tensor.add)
    x = torch.ones(3)
    before = dict(sp.recipes)
    x.add(torch.ones(3), alpha=torch.tensor(2))
    new = {k: v for k, v in sp.recipes.items() if k not in before}
    assert all(v is False for v in new.values())
    try:
        x.add(torch.ones(3), alpha=torch.ones(2))
    except (TypeError, RuntimeError):
        pass
    else:
        raise AssertionError("a 1-element non-0-dim alpha must be refused as upstream does")


def test_int_list_patterns_share_a_recipe_but_keep_their_values():
    v = torch.arange(24.)
    assert v.view(4, 6).shape == (4, 6)
    assert v.view(2, 12).shape == (2, 12)
    assert v.view([3, 8]).shape == (3, 8)
    assert v.view((6, -1)).shape == (6, 4)


def test_torch_function_mode_sees_calls_after_recipe():
    a = torch.rand(2)
    a + a  # records the recipe
    seen = []

    class Spy(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(getattr(func, "__name__", str(func)))
            return func(*args, **(kwargs or {}))

    with Spy():
        a + a
    assert seen and "add" in seen[0]


def test_subclass_and_dispatch_mode_see_calls_after_plain_lane():
    a = torch.rand(3)
    torch.mul(a, a)

    class Sub(torch.Tensor):
        hits = 0

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            cls.hits += 1
            return super().__torch_function__(func, types, args, kwargs or {})

    s = a.as_subclass(Sub)
    torch.mul(s, s)
    assert Sub.hits >= 1

    ops = []

    class Log(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            ops.append(str(func))
            return func(*args, **(kwargs or {}))

    with Log():
        torch.mul(a, a)
    assert ops == ["aten.mul.Tensor"]


def test_autograd_and_meta_leave_the_plain_lane():
    w = torch.rand(3, requires_grad=True)
    x = torch.rand(3)
    (x * x).sum()  # plain lane
    y = (x * w).sum()
    assert y.grad_fn is not None
    y.backward()
    assert torch.equal(w.grad, x)
    m = torch.empty(2, 3, device="meta")
    assert (m + m).device.type == "meta"
    assert torch.empty(2, device="meta").is_meta  # a factory's device decides, not the lane


def test_inplace_on_plain_tensor_bumps_version():
    x = torch.zeros(3)
    v0 = x._version
    x.add_(1)
    x.mul_(2)
    assert x._version == v0 + 2
    assert torch.equal(x, torch.full((3,), 2.0))


def test_lazy_storage_is_shared_by_views():
    r = torch.rand(4, 4) + 1  # a kernel's fresh result: storage made on demand
    v = r.view(16)
    assert r.untyped_storage().data_ptr() == v.untyped_storage().data_ptr()
    v[0] = -1.0
    assert r[0, 0].item() == -1.0
    assert r.data_ptr() == v.data_ptr()


def test_served_counts_plain_lane_calls():
    a = torch.rand(2)
    before = door.served[("aten::neg", "kernel")]
    -a
    -a
    assert door.served[("aten::neg", "kernel")] == before + 2


LAYOUT_PROGRAM = r"""
import json, torch
base = torch.arange(2 * 9 * 4 * 64, dtype=torch.float32).reshape(2, 4, 9, 64)
q = base.transpose(1, 2)                     # (2, 9, 4, 64), heads transposed
h = torch.arange(9 * 64, dtype=torch.float32).reshape(1, 9, 1, 64).transpose(1, 2)
cases = {
    "neg of a half": lambda: -q[..., 32:],
    "mul half by broadcast": lambda: q[..., :32] * torch.ones(2, 1, 1, 32),
    "add transposed + contiguous": lambda: q + q.contiguous(),
    "exp of a permuted view": lambda: base.permute(3, 1, 0, 2).exp(),
    "sub channels-last-like": lambda: base.permute(0, 2, 3, 1) - 1.0,
    # a decode step's head: size-1 dimensions whose strides numpy ignores and torch keeps
    "neg of a decode half": lambda: -h[..., 32:],
    "mul of a decode half": lambda: h[..., :32] * 2.0,
    "cat of decode halves": lambda: torch.cat((-h[..., 32:], h[..., :32]), dim=-1),
}
out = {}
for name, fn in cases.items():
    first, second = fn(), fn()               # the second call finds the pattern kept
    out[name] = [list(first.stride()), list(second.stride()),
                 bool(torch.equal(first, second)), first.reshape(-1)[:40:7].tolist()]
print(json.dumps(out))
"""


def test_pointwise_output_layout_kept_per_pattern_matches_upstream():
    # the output strides of a pointwise op are decided once per (shape, input sizes and
    # strides) pattern and reused; the reused answer must be TensorIterator's, as upstream's
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(LAYOUT_PROGRAM)
    assert ours == theirs


# each case of a program run REPEAT times (a kept pattern is found after the first), described
# by the program's describe(fn) or by the error it raised
_RUN_CASES = r"""
out = {}
for name, fn in cases.items():
    seen = []
    for _ in range(REPEAT):
        try:
            seen.append(describe(fn))
        except Exception as e:
            seen.append([type(e).__name__, str(e)])
    out[name] = seen
print(json.dumps(out))
"""

VIEW_PROGRAM = r"""
import json, torch
base = torch.arange(2 * 9 * 64, dtype=torch.float32)
x = base.reshape(2, 1, 576)
t = base.reshape(2, 9, 64).transpose(1, 2)            # not viewable as (2, -1)
cases = {
    "heads": lambda: x.view(2, 1, -1, 64),
    "heads list": lambda: x.view([2, 1, -1, 64]),
    "flat": lambda: x.view(-1),
    "transposed split": lambda: t.view(2, 64, 3, 3),
    "transposed merge": lambda: t.view(2, -1),         # error
    "two -1": lambda: x.view(-1, -1),                  # error
    "wrong size": lambda: x.view(5, -1),               # error
}
REPEAT = 3                                             # the geometry is kept after the first


def describe(fn):
    v = fn()
    return [list(v.shape), list(v.stride()), v.storage_offset(),
            bool(torch.equal(v.reshape(-1), v.contiguous().reshape(-1)))]
""" + _RUN_CASES


def test_view_geometry_kept_per_pattern_matches_upstream():
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(VIEW_PROGRAM)
    assert ours == theirs


def _same(a, b) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride() and \
        bool(torch.equal(a, b))


def test_float32_mean_and_square_shortcuts_equal_the_general_path():
    # mean over one float32 axis and pow(x, 2) skip their kernels' checks; asking for the
    # same dtype explicitly (mean) or multiplying (pow) takes the general path, bit for bit
    g = torch.Generator().manual_seed(0)
    inputs = [torch.randn(1, 1, 576, generator=g) * 1e3, torch.randn(4, 7, 33, generator=g),
              torch.randn(3, 4, generator=g).t(), torch.randn(2, 3, 4, generator=g)[:, :, 1:],
              torch.tensor([[3e38, 3e38, 1.0]]), torch.randn(2, 5, generator=g).double()]
    for x in inputs:
        for dim in ([-1], -1, [0], (1,), [0, 1]):
            for keepdim in (True, False):
                assert _same(x.mean(dim, keepdim=keepdim),
                             x.mean(dim, keepdim=keepdim, dtype=x.dtype))
        assert _same(x.pow(2), x * x) and _same(x.pow(2.0), x * x)
    # the shortcut's refusals are the general path's
    for bad in (lambda: torch.randn(2, 3).mean(5), lambda: torch.ones(2, 3).mean([1, 1])):
        try:
            bad()
        except (IndexError, RuntimeError) as e:
            assert "out of range" in str(e) or "multiple times" in str(e)
        else:
            raise AssertionError("an invalid dim was accepted")
    # a tensor that requires grad still records its graph (autograd sees the call first)
    w = torch.randn(1, 1, 8, requires_grad=True)
    w.pow(2).mean(-1, keepdim=True).sum().backward()
    assert torch.allclose(w.grad, 2 * w.detach() / 8)


def test_from_numpy_shares_memory_and_owns_its_view():
    import numpy as np

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = torch.from_numpy(a)
    t[0, 0] = 5.0
    assert a[0, 0] == 5.0 and t.stride() == (3, 1)
    a[1, 2] = -1.0
    assert t[1, 2].item() == -1.0
    a.shape = (3, 2)                      # the caller reshapes its array in place ...
    assert tuple(t.shape) == (2, 3)       # ... the tensor keeps its geometry
    m = torch.from_numpy(np.asmatrix(np.ones((2, 2))))   # an ndarray subclass: plain values
    assert tuple((m * m).shape) == (2, 2) and m.sum().item() == 4.0
    s = torch.from_numpy(np.ones((3, 4))[:, ::2])        # not contiguous: its own strides
    # its storage spans first to last element: (1 + 2 * 4 + 1 * 2) float64s, as upstream
    assert s.stride() == (4, 2) and s.untyped_storage().nbytes() == 8 * 11


READONLY_PROGRAM = r"""
import json, warnings
import numpy as np, torch
r = np.ones(4, np.float32)
r.flags.writeable = False
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    t = torch.from_numpy(r)
    torch.from_numpy(r)                       # warned once per program
t.add_(1)                                     # writable all the same: the write reaches r
print(json.dumps([[str(w.message).split(" (Triggered")[0] for w in seen], r.tolist()]))
"""


def test_from_numpy_of_a_read_only_array_as_upstream():
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(READONLY_PROGRAM)
    assert ours == theirs


FROM_NUMPY_STORAGE_PROGRAM = r"""
import json
import numpy as np, torch
out = []
a = np.arange(12, dtype=np.float32).reshape(3, 4)
for arr in (a, a[None], np.ones((3, 1)), np.ones((1, 5), np.int64)[:, None], a.T.copy()):
    t = torch.from_numpy(arr)
    st = t.untyped_storage()
    out.append([t.stride(), st.nbytes(), st.resizable(), t.data_ptr() == arr.ctypes.data,
                t.view(-1)[1:3].tolist() if t.is_contiguous() else None])
t = torch.from_numpy(a)
v = t[1]                                      # a view made before the storage was asked for
v[0] = 100.0
out.append([a[1, 0].item(), t.untyped_storage().data_ptr() == a.ctypes.data])
for make in (lambda: torch.from_numpy(np.ones(4, np.float32)), lambda: torch.ones(4)):
    try:
        make().resize_(100)
        out.append("resized")
    except RuntimeError as e:
        out.append(str(e).split("\n")[0])
print(json.dumps(out))
"""


def test_from_numpy_storage_as_upstream():
    # the storage object over a from_numpy array is made when first asked for: it must be
    # upstream's all the same (numpy's strides, the array's address, not resizable)
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(FROM_NUMPY_STORAGE_PROGRAM)
    assert ours == theirs
    assert ours[-2] != "resized" and ours[-1] == "resized"   # the control: torch.ones grows


# a pointwise result laid out as its transposed or channels-last operand: numpy's own K-order
# array, whose memory becomes the storage when first asked for
# every value exact on both sides (a vectorized exp's last bit is the CPU's, not the layout's)
PERMUTED_RESULT_PROGRAM = r"""
import hashlib, io, json
import torch
out = []
x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
cl = torch.arange(120, dtype=torch.float32).reshape(2, 3, 4, 5).to(memory_format=torch.channels_last)
for make in (lambda: -x.transpose(0, 2), lambda: x.transpose(1, 2) * 2, lambda: cl + 1,
             lambda: torch.abs(x.permute(2, 0, 1) - 11), lambda: -x.transpose(0, 2)[1:]):
    y = make()
    st = y.untyped_storage()
    row = [list(y.shape), y.stride(), y.is_contiguous(), st.nbytes(), st.resizable(),
           y.storage_offset(), y.data_ptr() == st.data_ptr()]
    v = y.view(-1) if y.is_contiguous() else y.transpose(0, -1)
    v.mul_(10)                                # a view's write reaches y and its storage
    row.append(y.flatten().tolist())
    buf = io.BytesIO()
    torch.save([y, y[0]], buf)
    row.append(hashlib.sha256(buf.getvalue()).hexdigest())
    y.resize_(5, 7)                           # a kernel's storage grows, as upstream's
    row += [y.stride(), y.untyped_storage().nbytes()]
    out.append(row)
print(json.dumps(out))
"""


def test_permuted_results_storage_as_upstream():
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(PERMUTED_RESULT_PROGRAM)
    assert ours == theirs


# programs that record the operators __torch_dispatch__ sees use the harness prelude's tracing
_TRACING = f"""
import json, sys
sys.path.insert(0, {str(Path(__file__).parent / "harness")!r})
import torch
from prelude import tracing
"""

# a subclass that lists the functions its __torch_function__ sees (programs that need it add it)
_SEEING_SUB = """

class Sub(torch.Tensor):
    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.seen.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})
"""

INDEX_PROGRAM = _TRACING + r"""

q = torch.arange(2 * 9 * 4 * 64, dtype=torch.float32).reshape(2, 4, 9, 64).transpose(1, 2)
cases = {
    "first half": lambda: q[..., :32],
    "second half": lambda: q[..., 32:],
    "whole dims skipped": lambda: q[:, :, ..., :],
    "from zero, past the end": lambda: q[0:100],
    "start and step": lambda: q[:, 1::2, ..., 3:60:5],
    "None and Ellipsis": lambda: q[None, ..., 1:, None],
    "int then slice": lambda: q[1, 2:, 0],
    "negative bounds": lambda: q[..., -8:-2],
    "step 0": lambda: q[..., ::0],
    "negative step": lambda: q[..., ::-1],
    "lone slice, step 0": lambda: q[::0],
    "too many": lambda: q[0, 0, 0, 0, :],
}
REPEAT = 2


def describe(fn):
    with tracing() as ops:
        v = fn()
    return [ops, list(v.shape), list(v.stride()), v.storage_offset(),
            v.reshape(-1)[:50:9].tolist()]
""" + _RUN_CASES


def test_basic_indexing_dispatches_as_upstream():
    # slices, Ellipsis and None are told apart by type before the int-index test, and a slice
    # starting past 0 reads no size: the dispatched operators, views and errors stay upstream's
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(INDEX_PROGRAM)
    assert ours == theirs


EMPTY_PROGRAM = r"""
import json, torch
e = torch.empty(2, 3)
e.fill_(0.0)
row = e[1]                                    # a view of a fresh result shares its memory
row.fill_(4.0)
r = torch.empty(2, 3)
r.resize_(4, 5)                               # its storage grows as upstream's does
z = torch.empty(0, 3)
s = torch.empty_strided((2, 3), (3, 1))
f = torch.empty(2, 3, dtype=torch.float64)
out = [e.tolist(), e._version, list(e.stride()), e.untyped_storage().nbytes(),
       e.data_ptr() == row.data_ptr() - 12, list(r.shape), r.untyped_storage().nbytes(),
       z.untyped_storage().nbytes(), list(z.stride()), list(s.stride()), str(f.dtype),
       f.untyped_storage().nbytes(), str(e.device), e.is_contiguous()]
print(json.dumps(out))
"""


def test_contiguous_empty_is_a_fresh_result_as_upstream():
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(EMPTY_PROGRAM)
    assert ours == theirs


FLASH_PROGRAM = r"""
import json, torch
g = torch.Generator().manual_seed(0)
flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
heads = torch.randn(1, 4, 9, 64, generator=g)
kv = torch.randn(1, 3, 4, 64, generator=g)
cases = {
    "contiguous": heads.transpose(1, 2).contiguous(),
    "transposed": heads.transpose(1, 2),
    "decode head": torch.randn(1, 1, 9, 64, generator=g).transpose(1, 2),
    "permuted": torch.randn(1, 4, 64, 9, generator=g).permute(0, 3, 1, 2),
}
out = {}
for name, q in cases.items():
    k = v = kv if q.shape[2] == 1 else torch.randn(1, 9, 4, 64, generator=g)
    o, lse = flash(q, k, v)[:2]
    out[name] = [list(o.stride()), o._base is None, list(lse.shape), list(lse.stride()),
                 lse._base is None, str(lse.dtype)]
print(json.dumps(out))
"""


def test_flash_attention_outputs_are_laid_out_as_upstream():
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(FLASH_PROGRAM)
    assert ours == theirs


def test_flash_attention_contiguous_lane_equals_the_strided_one():
    # a contiguous query's output is the result array itself; a strided query's is copied
    # into empty_like(query): the same values either way, bit for bit
    g = torch.Generator().manual_seed(1)
    flash = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    for dtype in (torch.float32, torch.float64, torch.bfloat16):
        q = torch.randn(2, 5, 3, 16, generator=g).to(dtype)
        k, v = torch.randn(2, 3, 7, 16, generator=g).to(dtype), \
            torch.randn(2, 3, 7, 16, generator=g).to(dtype)
        strided = q.transpose(1, 2)                   # (2, 3, 5, 16), heads strided
        for causal in (False, True):
            a, la = flash(strided.contiguous(), k, v, is_causal=causal)[:2]
            b, lb = flash(strided, k, v, is_causal=causal)[:2]
            assert a.is_contiguous() and b.stride() == strided.stride()
            assert torch.equal(a, b) and torch.equal(la, lb)
    # an empty query gives an empty output in the query's layout, and the logsumexp
    e = flash(torch.empty(1, 2, 0, 8), torch.empty(1, 2, 3, 8), torch.empty(1, 2, 3, 8))
    assert e[0].shape == (1, 2, 0, 8) and e[1].shape == (1, 2, 0)


TO_PROGRAM = _TRACING + r"""

x = torch.arange(12, dtype=torch.float32).reshape(3, 4).t()     # transposed: kept by preserve
out = {}
for name, fn in {
    "same dtype": lambda: x.to(torch.float32),
    "wider": lambda: x.to(torch.float64),
    "integral": lambda: x.to(torch.int32),
    "python type": lambda: x.to(float),
    "keyword": lambda: x.to(dtype=torch.bfloat16),
    "bad": lambda: x.to(torch.float32, torch.float64),
}.items():
    try:
        with tracing() as ops:
            y = fn()
        out[name] = [ops, y is x, str(y.dtype), list(y.stride()), y.reshape(-1).tolist()]
    except Exception as e:
        out[name] = [type(e).__name__]
print(json.dumps(out))
"""


def test_to_dtype_lane_as_upstream():
    # x.to(dtype) skips Tensor.to's general parse: same dispatches, identity and layout
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(TO_PROGRAM)
    assert ours == theirs


NUMPY_MODE_PROGRAM = _TRACING + r"""
import numpy as np
from prelude import function_tracing

with function_tracing() as seen:
    a = torch.from_numpy(np.arange(3.0))
    b = torch.frombuffer(bytearray(8), dtype=torch.float32)
    c = torch.as_tensor([1.0])
print(json.dumps([seen, a.tolist(), b.tolist(), c.tolist()]))
"""


def test_from_numpy_and_frombuffer_unseen_by_function_modes_as_upstream():
    # upstream's from_numpy/frombuffer bindings check no mode (as_tensor's does)
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(NUMPY_MODE_PROGRAM)
    assert ours == theirs


FUSED_LANE_PROGRAM = _TRACING + f"""
import importlib.util
from prelude import function_tracing

BUILD = {str(Path(__file__).resolve().parents[2] / "src" / "torchnative" / "kernels" / "repos" /
             "torchnative-cpu" / "build" / "torch-cpu")!r}
""" + r"""
spec = importlib.util.spec_from_file_location("_tn_lane_kernels", BUILD + "/__init__.py",
                                              submodule_search_locations=[BUILD])
pkg = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = pkg
spec.loader.exec_module(pkg)
L, ops = pkg.layers, pkg.layers._ops

lane = []           # the kernel functions the layers call themselves (the op keeps its own)
for name in ("_rms_norm", "_rotary", "_silu", "_silu_and_mul", "_attention"):
    def counted(*a, _f=getattr(ops, name), _n=name):
        lane.append(_n)
        return _f(*a)
    setattr(ops, name, counted)

g = torch.Generator().manual_seed(0)
def r(*s, dtype=torch.float32):
    return torch.rand(*s, generator=g, dtype=dtype)

norm = L.RMSNorm()
norm.weight = torch.nn.Parameter(r(64))
norm.variance_epsilon = 1e-6
x, q, k = r(1, 3, 64), r(1, 4, 3, 16), r(1, 2, 3, 16)
cos, sin, v = r(1, 3, 16), r(1, 3, 16), r(1, 2, 3, 16)
class Mod:
    is_causal, training = True, False
calls = {
    "rms_norm": lambda: norm(x),
    "rotary": lambda: L.RotaryPosEmb()(q, k, cos, sin),
    "silu": lambda: L.SiLU()(x),
    "silu_and_mul": lambda: L.SiluAndMul()(x),
    "attention": lambda: L.attention(Mod(), q[:, :, -1:], k, v, None)[0],   # a decode step
}

def desc(out):
    outs = out if isinstance(out, tuple) else (out,)
    return [[str(o.dtype), list(o.shape), list(o.stride()), o.requires_grad, o.is_inference(),
             o.device.type, o.detach().numpy().tobytes().hex() if o.device.type == "cpu" else None]
            for o in outs]

result = {}
for name, fn in calls.items():
    row = {}
    with torch.no_grad():
        lane.clear(); row["plain"] = [desc(fn()), list(lane)]
    with torch.inference_mode():
        lane.clear(); row["inference"] = [desc(fn()), list(lane)]
    lane.clear(); row["grad mode, no grad needed"] = [desc(fn()), list(lane)]
    with torch.no_grad():
        lane.clear()
        with tracing() as seen:
            out = fn()
        row["dispatch mode"] = [desc(out), [s for s in seen if "_tn_lane" in s], list(lane)]
        lane.clear()
        with function_tracing() as tf:
            out = fn()
        row["function mode"] = [desc(out), [s for s in tf if name in s], list(lane)]
    result[name] = row

# meta inputs take the operator (its fake kernel), never the numpy function
with torch.no_grad():
    lane.clear()
    m = L.SiLU()(torch.empty(2, 5, device="meta"))
    result["meta"] = [m.device.type, list(m.shape), list(lane)]
    # more than 128 scores per head (a 12-token prefill) is torch's own sdpa, never the numpy
    # function; a 3-token one (9 scores) keeps the operator's function
    lane.clear()
    p = L.attention(Mod(), r(1, 4, 12, 16), r(1, 2, 12, 16), r(1, 2, 12, 16), None)[0]
    result["prefill"] = [list(p.shape), list(p.stride()), list(lane)]
    lane.clear()
    p = L.attention(Mod(), q, k, v, None)[0]
    result["short prefill"] = [list(p.shape), list(p.stride()), list(lane)]
    # a CPU kernel registered over the operator's own: the operator (and so that kernel) runs
    lib = torch.library.Library(ops.NAMESPACE, "IMPL")
    lib.impl("silu", lambda t: torch.zeros_like(t), "CPU")
    lane.clear()
    result["overridden"] = [L.SiLU()(x).abs().sum().item(), list(lane)]
print(json.dumps(result))
"""


def test_fused_layers_call_their_kernel_only_where_nothing_observes():
    # a kernel layer that needs no gradient runs its numpy function itself; modes, meta
    # tensors and a CPU kernel registered over the operator still meet the operator, and the
    # tensors are the operator's (bits, dtype, strides, inference) on ours and upstream alike
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(FUSED_LANE_PROGRAM)
    assert ours == theirs
    assert ours.pop("short prefill")[-1] == ["_attention"]
    for name, row in ours.items():
        if name in ("meta", "overridden", "prefill"):
            assert row[-1] == [], (name, row)
            continue
        assert row["plain"][1] == ["_" + name], (name, row)     # the lane is taken...
        assert row["plain"][0] == row["dispatch mode"][0] == row["function mode"][0]
        assert row["dispatch mode"][1] and row["dispatch mode"][2] == []   # ...and left
        assert row["function mode"][1] and row["function mode"][2] == []
    assert ours["overridden"][0] == 0.0


NO_GRAD_LANE_PROGRAM = _TRACING + r"""
from prelude import function_tracing

p = torch.nn.Parameter(torch.arange(6, dtype=torch.float32).reshape(2, 3))
x = torch.arange(6, dtype=torch.float32).reshape(2, 3) + 1
h = p * 2                                     # has history


def desc(t):
    return [list(t.shape), list(t.stride()), t.requires_grad, t.grad_fn is not None, t.is_leaf,
            t._base is not None, t.is_inference(), t.reshape(-1).tolist()]


def attempt(fn):
    try:
        return fn()
    except Exception as e:
        return [type(e).__name__, str(e)]


out = {}
for mode, ctx in (("no_grad", torch.no_grad), ("inference", torch.inference_mode),
                  ("grad", torch.enable_grad)):
    row = []
    for _ in range(2):                        # the second call meets the operator's kept kernel
        with ctx():
            q = torch.nn.Parameter(torch.ones(3))
            v = p.view(6)
            cell = [desc(p * x), desc(h + x), desc(v), v._version == p._version,
                    desc(torch.mul(p, x)), desc(p.sum(0)), desc(p[1]), desc(p[:, 1:])]
            cell.append(attempt(lambda: (q.add_(1), q._version)[1]))
            with tracing() as ops:
                p * x
            with function_tracing() as names:
                p * x
            cell += [ops, names]
        # a view made here, changed in place with grad mode on: its creation mode decides
        cell.append(attempt(lambda: desc(v.mul_(1))))
        row.append(cell)
    out[mode] = row
print(json.dumps(out))
"""


def test_no_grad_lane_admits_tensors_that_require_grad_as_upstream(monkeypatch):
    # with grad mode off, a tensor that requires grad (a Parameter) or has history takes the
    # plain lane (autograd records nothing then); what every observer sees stays upstream's
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(NO_GRAD_LANE_PROGRAM)
    assert ours == theirs
    # control: the lane is taken under no_grad and refused under grad mode, where the result
    # must record (a lane leaking into grad mode would return a tensor without grad_fn)
    asked = []
    plain = door._plain_args
    w = torch.nn.Parameter(torch.rand(3))  # (a factory's own call takes the lane too)
    monkeypatch.setattr(door, "_plain_args", lambda v, grad=True: asked.append(
        (grad, plain(v, grad))) or asked[-1][1])
    with torch.no_grad():
        y = w * 2
    assert asked == [(False, True)] and y.grad_fn is None and not y.requires_grad
    asked.clear()
    y = w * 2
    # (below autograd, the recorded call's own one-pass check asks again, grad aside)
    assert asked[0] == (True, False) and y.grad_fn is not None
    assert all(grad is False for grad, _ in asked[1:])


BINDING_PROGRAM = _TRACING + _SEEING_SUB + r"""
from prelude import function_tracing

a = torch.arange(6, dtype=torch.float32).reshape(2, 3)
s = a.as_subclass(Sub)
idx = torch.tensor([1, 0]).as_subclass(Sub)  # (a 0-dim one: ours' int() dispatches nothing yet)
gen = torch.Generator().manual_seed(7)
calls = {
    "dunder": lambda: a * a,
    "dunder scalar": lambda: a * 2,
    "reflected": lambda: 2 - a,
    "dunder str": lambda: a + "x",
    "dunder None": lambda: a - None,
    "method varargs": lambda: a.view(3, 2),
    "method list": lambda: a.view([6]),
    "function": lambda: torch.mul(a, a),
    "function scalar": lambda: torch.add(a, 1),
    "max": lambda: torch.max(a, 1),
    "split": lambda: torch.split(a, 1),
    "int index": lambda: a[1],
    "negative index": lambda: a[-2],
    "bad index": lambda: a[2],
    "slices": lambda: a[:, 1:],
    "ellipsis": lambda: a[..., :2],
    "subclass dunder": lambda: s + s,
    "subclass index": lambda: s[1],
    "tensor-like index": lambda: a[idx],
    # a pattern recorded under its bare types (two ints), then sequences of the same arity
    "method two ints": lambda: a.transpose(0, 1),
    "method int then list": lambda: (a.sum(1), a.sum([0, 1]), a.sum((1,))),
    "function int then list": lambda: (torch.sum(a, 1), torch.sum(a, [0, 1])),
    "method no argument": lambda: a.t(),
    "method three ints": lambda: a.narrow(1, 0, 2),
    "function keyword": lambda: (torch.cumsum(a, 1), torch.cumsum(a, dim=1)),
    # keyword-only arguments at their defaults, left out of the recipes
    "alpha default": lambda: a.add(a),
    "alpha one given": lambda: (a.add(a, alpha=1), torch.add(a, a, alpha=1)),
    "alpha two": lambda: (a.add(a, alpha=2), torch.sub(a, a, alpha=2)),
    "factory defaults": lambda: (torch.zeros(2, 3), torch.full((2,), 3), torch.ones(2, dtype=torch.float64)),
    "rounding mode": lambda: (torch.div(a, 4), torch.div(a, 4, rounding_mode="floor")),
    # a Generator argument is checked by its type: its pattern is recorded too
    "generator keyword": lambda: (torch.randn(3, generator=gen), torch.rand(2, 2, generator=gen),
                                  torch.randint(0, 9, (4,), generator=gen),
                                  a.clone().normal_(generator=gen)),
    "generator wrong type": lambda: (torch.randn(3, generator=gen), torch.randn(3, generator=5)),
    "generator a tensor": lambda: torch.rand(2, generator=a),
}


def describe(fn):
    Sub.seen.clear()
    with tracing() as ops:
        try:
            r = fn()
        except Exception as e:
            r = [type(e).__name__, str(e)]
    seen = list(Sub.seen)  # before the result is read (ours' tolist/stride are not seen yet)
    if isinstance(r, tuple):
        r = [type(r).__name__, [[str(t.dtype), t.tolist()] for t in r]]
    elif isinstance(r, torch.Tensor):
        r = [type(r).__name__, r.tolist(), list(r.stride())]
    with function_tracing() as names:
        try:
            fn()
        except Exception:
            pass
    return [r, ops, names, seen]


out = {name: [describe(fn) for _ in range(3)] for name, fn in calls.items()}
print(json.dumps(out))
"""


def test_binding_recipes_and_index_entry_as_upstream():
    # a recorded pattern's recipe runs in the spelling's own frame (dunders, methods, torch
    # functions) and a plain tensor's int/slice index skips the torch function question it
    # knows the answer to: results, errors, dispatched operators and what torch function
    # modes and subclasses see stay upstream's on every repeat
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(BINDING_PROGRAM)
    assert ours == theirs
    # control: a function mode and the subclass did see the calls made after the recipes
    assert ours["dunder"][2][2] and ours["int index"][2][2] == ["__getitem__"]
    assert ours["subclass index"][2][3] and ours["tensor-like index"][2][3]


# a generate loop's per-step calls (the logits processor's mask, the stopping test, the cache
# position) take kernel shortcuts: arange made at its size, isin's equality lane, where's copy
# of a full-shape other, scalar_tensor's float lane. Each case is run plain, under a dispatch
# mode and a function mode, and with a tensor that requires grad; tensors, errors and what the
# modes see must be upstream's.
STEP_PROGRAM = _TRACING + r"""
from prelude import function_tracing
g = torch.Generator().manual_seed(0)
logits = torch.randn(1, 4096, generator=g)
logits.view(-1)[::97] = float("nan")
eos = torch.tensor([2])
ids = torch.tensor([[1, 504, 3458, 282, 2]])
leaf = torch.randn(1, 4096, generator=g).requires_grad_()
cases = {
    "arange vocab": lambda: torch.arange(4096),
    "arange position": lambda: torch.arange(7, 8, dtype=torch.int64),
    "arange floats": lambda: torch.arange(0.5, 9.0, 0.75),
    "arange bad": lambda: torch.arange(0, 5, 0),
    "isin vocab": lambda: torch.isin(torch.arange(4096), eos),
    "isin last id": lambda: torch.isin(ids[:, -1:], eos),
    "isin ids 0-d": lambda: torch.isin(ids, torch.tensor(2)),
    "isin inverted": lambda: torch.isin(ids, torch.tensor([2, 282]), invert=True),
    "isin mixed dtypes": lambda: torch.isin(ids, torch.tensor([2.0])),
    "where mask": lambda: torch.where(torch.isin(torch.arange(4096), eos), -float("inf"), logits),
    "where scalar other": lambda: torch.where(logits > 0, logits, 0.0),
    "where requires grad": lambda: torch.where(logits > 0, -float("inf"), leaf),
    "scalar_tensor": lambda: torch.scalar_tensor(-float("inf")),
    "scalar_tensor too big": lambda: torch.scalar_tensor(1e300, dtype=torch.float32),
}
REPEAT = 2


def describe(fn):
    with tracing() as ops:
        fn()
    with function_tracing() as names:
        fn()
    v = fn()
    grad = None
    if v.requires_grad:
        v.masked_fill(v.isinf(), 0).sum().backward()
        grad = [type(v.grad_fn).__name__, leaf.grad.reshape(-1)[:40:7].tolist()]
        leaf.grad = None
    return [ops, names, str(v.dtype), list(v.shape), list(v.stride()),
            [x if x == x else "nan" for x in v.detach().reshape(-1)[:60:5].tolist()], grad]
""" + _RUN_CASES


def test_generate_step_calls_as_upstream():
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(STEP_PROGRAM)
    assert ours == theirs


# the small operators' inline cases (views made without make's and note_view's calls, a float
# pair's add/sub/mul without dtype2 and apply2, softmax.int's dense case without _softmax, the
# spellings' sequence keys): each call plain, under a dispatch and a function mode, with a
# subclass and with tensors that require grad, in grad mode, no_grad and inference mode; what
# the modes and the subclass see, results, view relations, version counters and errors must
# be upstream's
SMALL_OPS_PROGRAM = _TRACING + _SEEING_SUB + r"""
import warnings
from prelude import function_tracing

g = torch.Generator().manual_seed(0)
a = torch.randn(4, 8, 16, generator=g)
b = torch.randn(4, 8, 16, generator=g)
big = torch.full((3,), 3e38)
leaf = torch.randn(4, 8, 16, generator=g).requires_grad_()
s = a.as_subclass(Sub)
h1, h2 = torch.randn(1, 9, 1, 32, generator=g), torch.randn(1, 9, 1, 32, generator=g)
a64, b64 = a.double(), b.double()  # (ours' function modes see double() as to(): made here)
cases = {
    "add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b,
    "add float64": lambda: a64 + b64, "add transposed": lambda: a.mT + b.mT,
    "add broadcast": lambda: a + b[:1], "add 0-dim": lambda: a + b[0, 0, 0],
    "add mismatched": lambda: a + b[..., :3], "add overflow": lambda: big + big,
    "mul mixed": lambda: a * b64, "sub scalar first": lambda: 2.5 - a,
    "add alpha": lambda: torch.add(a, b, alpha=2), "add leaf": lambda: a + leaf,
    "mul subclass": lambda: s * b,
    "softmax": lambda: torch.softmax(a, dim=-1), "softmax dim 0": lambda: torch.softmax(a, 0),
    "softmax bad dim": lambda: torch.softmax(a, dim=3), "softmax 0-d": lambda: a[0, 0, 0].softmax(0),
    "softmax dtype": lambda: torch.softmax(a, -1, dtype=torch.float64),
    "softmax transposed": lambda: a.mT.softmax(-1), "softmax leaf": lambda: leaf.softmax(-1),
    "softmax subclass": lambda: torch.softmax(s, -1),
    "view": lambda: a.view(32, 16), "view list": lambda: a.view([32, -1]),
    "transpose": lambda: a.transpose(0, 1), "select": lambda: a[1], "slice": lambda: a[:, 2:6],
    "view of leaf": lambda: leaf.view(32, 16), "view of view": lambda: a[1].view(-1),
    "view subclass": lambda: s.view(32, 16),
    "cat": lambda: torch.cat((h1, h2), dim=-1), "cat list": lambda: torch.cat([h1, h2], 0),
    "cat subclass": lambda: torch.cat((h1, s[:1, :1, :1, :32].reshape(1, 1, 1, 32).expand(1, 9, 1, 32)), -1),
    "cat mismatched": lambda: torch.cat((h1, a), dim=-1), "stack": lambda: torch.stack((h1, h2)),
    "sum dims": lambda: torch.sum(a, dim=(0, 1)), "permute": lambda: a.permute((2, 0, 1)),
}
REPEAT = 2


def value(r):
    if isinstance(r, torch.Tensor):
        v = r.detach().reshape(-1)[:64:7].tolist()
        # (a subclass's view relation is its as_subclass's, not these kernels': left out)
        plain = type(r) is torch.Tensor
        return [type(r).__name__, str(r.dtype), list(r.shape), list(r.stride()),
                [round(x, 4) if x == x else "nan" for x in v], plain and r._is_view(),
                plain and r._base is not None and
                r._base.data_ptr() == r.untyped_storage().data_ptr(),
                r.requires_grad, type(r.grad_fn).__name__, torch.is_inference(r)]
    return r


def attempt(fn):
    Sub.seen.clear()
    try:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = fn()
    except Exception as e:
        return [type(e).__name__, str(e)], list(Sub.seen)
    seen = list(Sub.seen)  # before the result is read (ours' tolist/stride are not seen yet)
    return [value(r), [str(x.category.__name__) for x in w]], seen


def quiet(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception:
        pass


def describe(fn):
    out = []
    for mode in (torch.enable_grad, torch.no_grad):
        with mode():
            plain, seen = attempt(fn)
            with tracing() as ops:
                quiet(fn)
            with function_tracing() as names:
                quiet(fn)
        out.append([plain, seen, ops, names])
    with torch.inference_mode():  # (a dispatch mode sees upstream's composites there: not ours)
        out.append(attempt(fn))
    # a view's version counter is its base's; an in-place change through a no-grad view of a
    # leaf is refused (its creation mode was stamped)
    with torch.no_grad():
        v = fn()
    if isinstance(v, torch.Tensor) and v._is_view():
        before = v._version
        out.append([attempt(lambda: v.mul_(1))[0], v._version - before])
    return out
""" + _RUN_CASES


def test_small_op_inline_cases_as_upstream():
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(SMALL_OPS_PROGRAM)
    assert ours == theirs
    # controls: the modes and the subclass saw the calls after the inline cases were taken
    assert ours["add"][1][0][2] == ["aten.add.Tensor"] and ours["add"][1][0][3]
    assert ours["mul subclass"][1][0][1] and ours["softmax subclass"][1][0][1]
    assert ours["view of leaf"][1][-1][0][0] == "RuntimeError"


FACTORY_AND_UNRECORDED_PROGRAM = _TRACING + r"""

torch.manual_seed(0)
x = torch.rand(3, 4, requires_grad=True)
y = x * 2
g = torch.Generator().manual_seed(1)
cases = {
    "empty": lambda: torch.empty(2, 3).fill_(1.5),
    "zeros float64": lambda: torch.zeros(2, 3, dtype=torch.float64),
    "full int": lambda: torch.full((2, 2), 7),
    "rand with a generator": lambda: torch.rand(3, generator=g),
    "arange": lambda: torch.arange(5, dtype=torch.float32),
    "meta device string": lambda: torch.empty(2, 3, device="meta"),
    "meta device object": lambda: torch.ones(2, device=torch.device("meta")),
    "float8 (stored as bits)": lambda: torch.zeros(2, 3, dtype=torch.float8_e4m3fn),
    "bfloat16": lambda: torch.ones(2, dtype=torch.bfloat16),
    "ones_like of a result with history": lambda: torch.ones_like(y),
    "zeros_like of a leaf requiring grad": lambda: torch.zeros_like(x),
    "rand_like of a leaf requiring grad": lambda: torch.rand_like(x),
    "argmax of a result with history": lambda: y.argmax(),
    "eq of a result with history": lambda: y == y,
    "isnan of a leaf requiring grad": lambda: torch.isnan(x),
}
REPEAT = 2


def facts(v):
    return [list(v.shape), str(v.dtype), str(v.device), v.requires_grad, v.grad_fn is None,
            v.is_leaf, [] if v.is_meta else v.float().reshape(-1)[:6].tolist()]


def describe(fn):
    plain = fn()                 # nothing observing: the lane's call
    torch.manual_seed(0)
    with tracing() as ops:       # a dispatch mode sees every call the lane would skip
        traced = fn()
    with torch.no_grad():
        quiet = fn()
    return [facts(plain), ops, facts(traced)[:5], facts(quiet)[:5]]
""" + _RUN_CASES


def test_factories_and_unrecorded_operators_lane_as_upstream():
    # factories now take the plain lane, their device and dtype keywords checked (a meta device
    # and a bit-stored dtype leave it); operators autograd never records take it with inputs
    # that require grad, their kernel under grad mode off: values, dtypes, devices, autograd
    # facts and what a dispatch mode sees stay upstream's
    from torchnative.testing import upstream

    ours, theirs = upstream.run_both(FACTORY_AND_UNRECORDED_PROGRAM)
    assert ours == theirs


def test_unrecorded_operators_lane_runs_the_kernel_with_grad_mode_off(monkeypatch):
    # control for the lane above: the kernel of an operator autograd never records runs with
    # grad mode off even when its input requires grad (its own calls must record nothing)
    from torchnative.csrc.dispatch.call import op as op_of
    from torchnative.csrc.kernels import factories

    # (a strided input: ones_like's kernel then calls _like, which the test watches)
    x = torch.empty_strided((3,), (2,)).fill_(1.0).requires_grad_()
    torch.ones_like(x)  # resolves the lane
    op = op_of("ones_like")
    assert op.plain is not None and op.plain.grad is False
    seen = []
    like = factories._like  # what ones_like's kernel calls
    monkeypatch.setattr(factories, "_like", lambda *a: seen.append(torch.is_grad_enabled()) or
                        like(*a))
    out = torch.ones_like(x)
    assert seen == [False] and torch.is_grad_enabled() and not out.requires_grad
    x * 2
    assert op_of("mul.Tensor").plain.grad is True  # a differentiable operator keeps the check
