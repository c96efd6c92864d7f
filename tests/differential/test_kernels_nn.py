"""Matmul-family and neural-network kernels against upstream torch 2.13.0, in a separate process.

Every case is a snippet run by both interpreters on the same inputs (numpy RandomState seeded by
the case name). Upstream runs once per session (``testing.upstream.run_script``): each case in
its own dtype, and again with floating inputs widened to float64, which measures upstream's own
error. Per (family, dtype) the tolerance is derived from that error (``golden.tolerance.derive``:
P90 of upstream's float32-vs-float64 error, floored at a few ulp; float64 carries float32's in
ulps); a value passes when it is within it of upstream's, or no farther from the float64 answer
than upstream's own. Integers, booleans, shapes, dtypes, strides, raised exception types and
messages compare exactly. ``trace`` cases also compare the operators __torch_dispatch__ sees
(composites must call the operators upstream's C++ calls, in its order).
"""

from __future__ import annotations

import textwrap

import pytest

from kernel_golden import golden_suite

# ------------------------------------------------------------------------------ the cases
# (name, family, setup, expression, flags); flags: trace, seed (manual_seed(0) first), exact.

CASES: list = []


def case(name, family, expr, setup="", *flags):
    CASES.append((name, family, textwrap.dedent(setup), expr, list(flags)))


FLOAT_DTYPES = ("float32", "float64", "bfloat16", "float16")

# mm / addmm / bmm / baddbmm / addbmm / addmv / mv / dot / vdot
for dt in FLOAT_DTYPES + ("complex64",):
    case(f"mm_{dt}", "mm", "T.mm(a, b)",
         f"a = mk.randn(7, 33, dtype='{dt}'); b = mk.randn(33, 5, dtype='{dt}')")
    case(f"mm_vec_{dt}", "mm", "T.mm(a, b.t())",
         f"a = mk.randn(1, 64, dtype='{dt}'); b = mk.randn(48, 64, dtype='{dt}')")
    case(f"bmm_{dt}", "bmm", "T.bmm(a, b)",
         f"a = mk.randn(3, 6, 17, dtype='{dt}'); b = mk.randn(3, 17, 9, dtype='{dt}')")
    case(f"bmm_small_{dt}", "bmm", "T.bmm(a, b.transpose(1, 2))",
         f"a = mk.randn(2, 3, 4, dtype='{dt}'); b = mk.randn(2, 5, 4, dtype='{dt}')")
    case(f"addmm_{dt}", "addmm", "T.addmm(c, a, b, beta=0.5, alpha=2)",
         f"a = mk.randn(6, 20, dtype='{dt}'); b = mk.randn(20, 4, dtype='{dt}'); "
         f"c = mk.randn(4, dtype='{dt}')")
    case(f"baddbmm_{dt}", "baddbmm", "T.baddbmm(c, a, b, beta=-1, alpha=0.25)",
         f"a = mk.randn(2, 5, 12, dtype='{dt}'); b = mk.randn(2, 12, 7, dtype='{dt}'); "
         f"c = mk.randn(5, 7, dtype='{dt}')")
    case(f"addbmm_{dt}", "addbmm", "T.addbmm(c, a, b, alpha=3)",
         f"a = mk.randn(4, 5, 12, dtype='{dt}'); b = mk.randn(4, 12, 7, dtype='{dt}'); "
         f"c = mk.randn(5, 7, dtype='{dt}')")
    case(f"addmv_{dt}", "addmv", "T.addmv(c, a, v, beta=2, alpha=0.5)",
         f"a = mk.randn(9, 30, dtype='{dt}'); v = mk.randn(30, dtype='{dt}'); "
         f"c = mk.randn(9, dtype='{dt}')")
    case(f"mv_{dt}", "mv", "T.mv(a.t(), v)",
         f"a = mk.randn(30, 9, dtype='{dt}'); v = mk.randn(30, dtype='{dt}')")
    case(f"dot_{dt}", "dot", "T.dot(a, b)",
         f"a = mk.randn(100, dtype='{dt}'); b = mk.randn(100, dtype='{dt}')")
    case(f"vdot_{dt}", "dot", "T.vdot(a, b)",
         f"a = mk.randn(50, dtype='{dt}'); b = mk.randn(50, dtype='{dt}')")

for dt in ("int64", "int32", "uint8", "int8"):
    case(f"mm_{dt}", "mm", "T.mm(a, b)",
         f"a = mk.randint(-100, 100, (5, 9), '{dt}'); b = mk.randint(-100, 100, (9, 3), '{dt}')")
    case(f"bmm_{dt}", "bmm", "T.bmm(a, b)",
         f"a = mk.randint(-9, 9, (2, 5, 9), '{dt}'); b = mk.randint(-9, 9, (2, 9, 3), '{dt}')")
    case(f"addmm_{dt}", "addmm", "T.addmm(c, a, b, beta=3, alpha=2)",
         f"a = mk.randint(-9, 9, (5, 9), '{dt}'); b = mk.randint(-9, 9, (9, 3), '{dt}'); "
         f"c = mk.randint(-9, 9, (5, 3), '{dt}')")
    case(f"dot_{dt}", "dot", "T.dot(a, b)",
         f"a = mk.randint(-50, 50, (40,), '{dt}'); b = mk.randint(-50, 50, (40,), '{dt}')")
    case(f"mv_{dt}", "mv", "T.mv(a, b)",
         f"a = mk.randint(-50, 50, (4, 40), '{dt}'); b = mk.randint(-50, 50, (40,), '{dt}')")

# special values: beta=0 ignores NaN in self, k=0, empty, non-contiguous, broadcast self
case("addmm_beta0_nan", "addmm", "T.addmm(c, a, b, beta=0)",
     "a = mk.randn(3, 4); b = mk.randn(4, 2); c = mk.tensor([[float('nan')] * 2] * 3)")
case("addmm_k0", "addmm", "T.addmm(c, a, b, beta=2)",
     "a = mk.randn(3, 0); b = mk.randn(0, 2); c = mk.randn(3, 2)")
case("addmm_int_alpha_float", "addmm", "T.addmm(c, a, b, alpha=2.7, beta=1.9)",
     "a = mk.randint(-9, 9, (3, 4)); b = mk.randint(-9, 9, (4, 2)); c = mk.randint(-9, 9, (3, 2))")
case("addmm_alpha_complex", "errors", "T.addmm(c, a, b, alpha=1j)",
     "a = mk.randn(3, 4); b = mk.randn(4, 2); c = mk.randn(3, 2)")
case("addmm_bool_alpha", "addmm", "T.addmm(c, a, b, alpha=True)",
     "a = mk.randn(3, 4); b = mk.randn(4, 2); c = mk.randn(3, 2)")
case("mm_k0", "mm", "T.mm(a, b)", "a = mk.randn(3, 0); b = mk.randn(0, 2)")
case("mm_empty", "mm", "T.mm(a, b)", "a = mk.randn(0, 3); b = mk.randn(3, 2)")
case("mm_noncontig", "mm", "T.mm(a[:, ::2], b.t()[1:])",
     "a = mk.randn(5, 8); b = mk.randn(3, 5)")
case("bmm_k0", "bmm", "T.bmm(a, b)", "a = mk.randn(2, 3, 0); b = mk.randn(2, 0, 4)")
case("baddbmm_beta0", "baddbmm", "T.baddbmm(c, a, b, beta=0)",
     "a = mk.randn(2, 3, 4); b = mk.randn(2, 4, 5); c = mk.tensor([float('inf')])")
case("addbmm_empty_batch", "addbmm", "T.addbmm(c, a, b, beta=2)",
     "a = mk.randn(0, 3, 4); b = mk.randn(0, 4, 5); c = mk.randn(3, 5)")
case("addmv_scalar_self", "addmv", "T.addmv(c, a, v)",
     "a = mk.randn(4, 6); v = mk.randn(6); c = mk.tensor(1.5)")
case("vdot_complex128", "dot", "T.vdot(a, b)",
     "a = mk.randn(20, dtype='complex128'); b = mk.randn(20, dtype='complex128')")
case("dot_bf16_long", "dot", "T.dot(a, b)",
     "a = mk.randn(1000, dtype='bfloat16'); b = mk.randn(1000, dtype='bfloat16')")

# errors (type and message exactly)
_ERRS = {
    "mm_dtype": "T.mm(mk.randn(2, 3), mk.randn(3, 4, dtype='float64'))",
    "mm_1d": "T.mm(mk.randn(3), mk.randn(3, 4))",
    "mm_1d2": "T.mm(mk.randn(2, 3), mk.randn(3))",
    "mm_shape": "T.mm(mk.randn(2, 3), mk.randn(2, 3))",
    "mm_bool": "T.mm(mk.randn(2, 3).bool(), mk.randn(3, 2).bool())",
    "mm_u16": "T.mm(mk.randint(0, 3, (2, 3), 'uint16'), mk.randint(0, 3, (3, 2), 'uint16'))",
    "bmm_2d": "T.bmm(mk.randn(2, 3), mk.randn(3, 2))",
    "bmm_shape": "T.bmm(mk.randn(2, 3, 4), mk.randn(3, 4, 5))",
    "bmm_dtype": "T.bmm(mk.randn(2, 3, 4), mk.randn(2, 4, 5, dtype='float64'))",
    "bmm_bool": "T.bmm(mk.randn(2, 3, 4).bool(), mk.randn(2, 4, 5).bool())",
    "addmm_dtype_self": "T.addmm(mk.randn(2, 4, dtype='float64'), mk.randn(2, 3), mk.randn(3, 4))",
    "addmm_dtype_mat1": "T.addmm(mk.randn(2, 4), mk.randn(2, 3, dtype='float64'), mk.randn(3, 4))",
    "addmm_self_shape": "T.addmm(mk.randn(3, 4), mk.randn(2, 3), mk.randn(3, 4))",
    "addmm_1d": "T.addmm(mk.randn(2, 4), mk.randn(3), mk.randn(3, 4))",
    "addmv_shape": "T.addmv(mk.randn(3), mk.randn(2, 3), mk.randn(3))",
    "addmv_dtype": "T.addmv(mk.randn(2), mk.randn(2, 3), mk.randn(3, dtype='float64'))",
    "mv_dims": "T.mv(mk.randn(2, 3), mk.randn(2, 3))",
    "mv_dtype": "T.mv(mk.randn(2, 3), mk.randn(3, dtype='float64'))",
    "mv_bool": "T.mv(mk.randn(2, 3).bool(), mk.randn(3).bool())",
    "dot_dims": "T.dot(mk.randn(2, 3), mk.randn(2, 3))",
    "dot_dtype": "T.dot(mk.randn(3), mk.randn(3, dtype='float64'))",
    "dot_size": "T.dot(mk.randn(3), mk.randn(4))",
    "dot_bool": "T.dot(mk.randn(3).bool(), mk.randn(3).bool())",
    "vdot_csize": "T.vdot(mk.randn(3, dtype='complex64'), mk.randn(4, dtype='complex64'))",
    "baddbmm_dtype": "T.baddbmm(mk.randn(2, 3, 5, dtype='float64'), mk.randn(2, 3, 4), mk.randn(2, 4, 5))",
    "baddbmm_shape": "T.baddbmm(mk.randn(2, 3, 4), mk.randn(2, 3, 4), mk.randn(2, 4, 5))",
    "addbmm_batch": "T.addbmm(mk.randn(3, 5), mk.randn(2, 3, 4), mk.randn(3, 4, 5))",
    "addbmm_k": "T.addbmm(mk.randn(3, 5), mk.randn(2, 3, 4), mk.randn(2, 3, 5))",
    "addbmm_dtype": "T.addbmm(mk.randn(3, 5, dtype='float64'), mk.randn(2, 3, 4), mk.randn(2, 4, 5))",
    "addbmm_2d": "T.addbmm(mk.randn(3, 5), mk.randn(3, 4), mk.randn(4, 5))",
    "matmul_0d": "T.matmul(mk.tensor(1.0), mk.randn(2, 3))",
    "matmul_bad": "T.matmul(mk.randn(2, 3, 4), mk.randn(2, 5, 6))",
    "matmul_bad1": "T.matmul(mk.randn(2, 3, 4), mk.randn(5))",
    "matmul_bcast": "T.matmul(mk.randn(2, 3, 4), mk.randn(3, 4, 5))",
    "matmul_dtype": "T.matmul(mk.randn(2, 3, 4), mk.randn(4, 5, dtype='float64'))",
    "linear_0d": "F.linear(mk.tensor(1.0), mk.randn(2, 3))",
    "linear_shape": "F.linear(mk.randn(2, 3, 8), mk.randn(8, 5), mk.randn(5))",
}
for _n, _e in _ERRS.items():
    case(f"err_{_n}", "errors", _e)

# matmul and linear: values, and the operators they dispatch (upstream's C++ order)
_MATMUL = {
    "1d1d": ("(8,)", "(8,)"), "2d1d": ("(3, 8)", "(8,)"), "2d2d": ("(3, 8)", "(8, 4)"),
    "3d2d": ("(2, 3, 8)", "(8, 4)"), "3d1d": ("(2, 3, 8)", "(8,)"),
    "4d4d": ("(2, 2, 3, 8)", "(2, 2, 8, 5)"), "bcast": ("(2, 1, 3, 8)", "(4, 8, 5)"),
    "3d3d": ("(4, 3, 8)", "(4, 8, 5)"), "3d3d_b1": ("(1, 3, 8)", "(4, 8, 5)"),
    "empty": ("(2, 0, 8)", "(8, 3)"),
}
for _n, (_a, _b) in _MATMUL.items():
    case(f"matmul_{_n}", "matmul", "T.matmul(a, b)",
         f"a = mk.randn(*{_a}); b = mk.randn(*{_b})", "trace")
case("matmul_2d3d", "matmul", "T.matmul(a, b.transpose(1, 2))",
     "a = mk.randn(3, 8); b = mk.randn(2, 5, 8)", "trace")
case("matmul_3d2d_noncontig", "matmul", "T.matmul(a.transpose(0, 1), b)",
     "a = mk.randn(3, 2, 8); b = mk.randn(8, 5)", "trace")
case("matmul_1d3d", "matmul", "T.matmul(a, b)", "a = mk.randn(8); b = mk.randn(2, 8, 5)", "trace")
case("matmul_3d2d_grad", "matmul", "T.matmul(a, b)",
     "a = mk.randn(2, 3, 8); b = mk.randn(8, 4).requires_grad_()", "trace", "nograd")
case("matmul_out", "matmul", "T.matmul(a, b, out=o)",
     "a = mk.randn(2, 3, 8); b = mk.randn(8, 4); o = mk.randn(2, 3, 4)")
for dt in FLOAT_DTYPES:
    case(f"matmul_4d_{dt}", "matmul", "T.matmul(a, b)",
         f"a = mk.randn(2, 3, 5, 16, dtype='{dt}'); b = mk.randn(2, 3, 16, 7, dtype='{dt}')")
    case(f"linear_{dt}", "linear", "F.linear(x, w, b)",
         f"x = mk.randn(2, 3, 32, dtype='{dt}'); w = mk.randn(10, 32, dtype='{dt}'); "
         f"b = mk.randn(10, dtype='{dt}')")
_LINEAR = {
    "3d": "(2, 3, 8)", "2d": "(3, 8)", "1d": "(8,)", "4d": "(2, 2, 3, 8)",
}
for _n, _x in _LINEAR.items():
    case(f"linear_{_n}", "linear", "F.linear(x, w, b)",
         f"x = mk.randn(*{_x}); w = mk.randn(5, 8); b = mk.randn(5)", "trace")
    case(f"linear_{_n}_nobias", "linear", "F.linear(x, w)",
         f"x = mk.randn(*{_x}); w = mk.randn(5, 8)", "trace")
case("linear_noncontig", "linear", "F.linear(x.transpose(0, 1), w, b)",
     "x = mk.randn(3, 2, 8); w = mk.randn(5, 8); b = mk.randn(5)", "trace")
case("linear_bias_row", "linear", "F.linear(x, w, b)",
     "x = mk.randn(2, 3, 8); w = mk.randn(5, 8); b = mk.randn(1, 5)", "trace")
case("linear_bias_2d", "linear", "F.linear(x, w, b)",
     "x = mk.randn(2, 3, 8); w = mk.randn(5, 8); b = mk.randn(3, 5)", "trace")
case("linear_bias_strided", "linear", "F.linear(x, w, b[:, 0])",
     "x = mk.randn(2, 3, 8); w = mk.randn(5, 8); b = mk.randn(5, 2)", "trace")
case("linear_w1d", "linear", "F.linear(x, w)", "x = mk.randn(2, 3, 8); w = mk.randn(8)", "trace")


# softmax family
for dt in FLOAT_DTYPES:
    case(f"softmax_{dt}", "softmax", "F.softmax(x, -1)", f"x = mk.randn(3, 4, 37, dtype='{dt}') * 4")
    case(f"softmax_dim1_{dt}", "softmax", "F.softmax(x, 1)", f"x = mk.randn(3, 5, 7, dtype='{dt}')")
    case(f"log_softmax_{dt}", "log_softmax", "F.log_softmax(x, -1)",
         f"x = mk.randn(4, 50, dtype='{dt}') * 3")
    case(f"log_softmax_dim0_{dt}", "log_softmax", "F.log_softmax(x, 0)",
         f"x = mk.randn(6, 5, dtype='{dt}')")
case("softmax_dtype", "softmax", "F.softmax(x, -1, dtype=mk.dt('float64'))", "x = mk.randn(3, 9)",
     "trace")
case("softmax_trace", "softmax", "F.softmax(x, 0)", "x = mk.randn(3, 9)", "trace")
case("log_softmax_trace", "log_softmax", "F.log_softmax(x, 1, dtype=mk.dt('float32'))",
     "x = mk.randn(3, 9, dtype='float64')", "trace")
case("softmax_noncontig", "softmax", "T._softmax(x.transpose(0, 1), 1, False)",
     "x = mk.randn(5, 4)")
case("softmax_inf", "softmax", "F.softmax(x, -1)",
     "x = mk.tensor([[0., float('-inf'), 1.], [float('-inf')] * 3, [float('inf'), 0., 1.], "
     "[float('nan'), 0., 1.]])")
case("log_softmax_inf", "log_softmax", "F.log_softmax(x, -1)",
     "x = mk.tensor([[0., float('-inf'), 1.], [float('-inf')] * 3, [2., 1., 3.]])")
case("softmax_0d", "softmax", "T._softmax(x, 0, False)", "x = mk.tensor(2.0)")
case("softmax_empty", "softmax", "T._softmax(x, 1, False)", "x = mk.randn(0, 3)")
case("safe_softmax", "softmax", "T.ops.aten._safe_softmax(x, -1)",
     "x = mk.tensor([[0., float('-inf'), 1.], [float('-inf')] * 3])")
case("safe_softmax_bf16", "softmax", "T.ops.aten._safe_softmax(x, -1)",
     "x = mk.tensor([[0., float('-inf'), 1.], [float('-inf')] * 3], 'bfloat16')")
_ERRS2 = {
    "softmax_int": "T._softmax(mk.randint(0, 3, (3, 4)), -1, False)",
    "softmax_int_dim0": "T._softmax(mk.randint(0, 3, (3, 4)), 0, False)",
    "log_softmax_int": "T._log_softmax(mk.randint(0, 3, (3, 4)), -1, False)",
    "log_softmax_int_dim0": "T._log_softmax(mk.randint(0, 3, (3, 4)), 0, False)",
    "softmax_dim": "T._softmax(mk.randn(3, 4), 2, False)",
    "softmax_h2f": "T._softmax(mk.randn(3, 4, dtype='float16'), 1, True)",
    "softmax_bool": "T._softmax(mk.randn(3, 4).bool(), -1, False)",
    "layer_norm_shape": "T.layer_norm(mk.randn(3, 4), (3,))",
    "layer_norm_shape2": "T.layer_norm(mk.randn(3, 4), (2, 4))",
    "layer_norm_w": "T.layer_norm(mk.randn(3, 4), (4,), mk.randn(3))",
    "layer_norm_b": "T.layer_norm(mk.randn(3, 4), (4,), None, mk.randn(3))",
    "layer_norm_int": "T.layer_norm(mk.randint(0, 3, (3, 4)), (4,))",
    "layer_norm_empty": "T.native_layer_norm(mk.randn(3, 4), [], None, None, 1e-5)",
    "layer_norm_mixed2": "T.native_layer_norm(mk.randn(3, 4, dtype='bfloat16'), [4], "
                         "mk.randn(4, dtype='bfloat16'), mk.randn(4), 1e-5)",
    "layer_norm_mixed3": "T.native_layer_norm(mk.randn(3, 4), [4], mk.randn(4, dtype='bfloat16'), "
                         "None, 1e-5)",
    "rms_int": "F.rms_norm(mk.randint(0, 3, (3, 4)), (4,))",
    "rms_shape": "F.rms_norm(mk.randn(3, 4), (2, 4))",
    "rms_empty": "F.rms_norm(mk.randn(3, 4), ())",
    "rms_w": "F.rms_norm(mk.randn(3, 4), (4,), mk.randn(3))",
    "emb_float": "F.embedding(mk.randn(3), mk.randn(3, 4))",
    "emb_bool": "F.embedding(mk.randn(3).bool(), mk.randn(3, 4))",
    "emb_bf16": "F.embedding(mk.randn(3, dtype='bfloat16'), mk.randn(3, 4))",
    "emb_1d": "F.embedding(mk.tensor([0]), mk.randn(4))",
    "emb_oob": "F.embedding(mk.tensor([5]), mk.randn(3, 4))",
    "emb_neg": "F.embedding(mk.tensor([-1]), mk.randn(3, 4))",
    "native_dropout_p": "T.native_dropout(mk.randn(3, 4), 1.5, True)",
    "dropout_p": "T.dropout(mk.randn(3, 4), 1.5, True)",
    "dropout_int": "T.dropout(mk.randint(0, 3, (3, 4)), 0.5, True)",
    "feature_dropout_1d": "T.feature_dropout(mk.randn(4), 0.5, True)",
    "one_hot_float": "F.one_hot(mk.randn(3), 3)",
    "one_hot_neg": "F.one_hot(mk.tensor([-1, 2]), 3)",
    "one_hot_big": "F.one_hot(mk.tensor([1, 3]), 3)",
    "one_hot_empty": "F.one_hot(mk.randint(0, 3, (0,)))",
}
for _n, _e in _ERRS2.items():
    case(f"err_{_n}", "errors", _e)

# layer_norm / rms_norm / batch_norm / group_norm
for dt in FLOAT_DTYPES:
    case(f"layer_norm_{dt}", "layer_norm", "T.native_layer_norm(x, [32], w, b, 1e-5)",
         f"x = mk.randn(2, 5, 32, dtype='{dt}') * 3 + 1; w = mk.randn(32, dtype='{dt}'); "
         f"b = mk.randn(32, dtype='{dt}')")
    case(f"rms_norm_{dt}", "rms_norm", "F.rms_norm(x, (16,), w, 1e-6)",
         f"x = mk.randn(3, 4, 16, dtype='{dt}'); w = mk.randn(16, dtype='{dt}')", "trace")
    case(f"group_norm_{dt}", "group_norm", "T.native_group_norm(x, w, b, 2, 6, 20, 3, 1e-5)",
         f"x = mk.randn(2, 6, 4, 5, dtype='{dt}') * 2; w = mk.randn(6, dtype='{dt}'); "
         f"b = mk.randn(6, dtype='{dt}')")
    case(f"batch_norm_train_{dt}", "batch_norm",
         "(T.native_batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5), rm, rv)",
         f"x = mk.randn(4, 3, 5, 5, dtype='{dt}') * 2 + 1; w = mk.randn(3, dtype='{dt}'); "
         f"b = mk.randn(3, dtype='{dt}'); rm = mk.randn(3, dtype='{dt}'); "
         f"rv = mk.rand(3, dtype='{dt}') + 0.5")
    case(f"batch_norm_eval_{dt}", "batch_norm",
         "T.native_batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5)",
         f"x = mk.randn(4, 3, 5, dtype='{dt}'); w = mk.randn(3, dtype='{dt}'); "
         f"b = mk.randn(3, dtype='{dt}'); rm = mk.randn(3, dtype='{dt}'); "
         f"rv = mk.rand(3, dtype='{dt}') + 0.5")
case("layer_norm_trace", "layer_norm", "T.layer_norm(x, (4, 8))", "x = mk.randn(3, 4, 8)", "trace")
case("layer_norm_noaffine", "layer_norm", "T.native_layer_norm(x, [8], None, None, 1e-5)",
     "x = mk.randn(3, 4, 8)")
case("layer_norm_noncontig", "layer_norm", "T.native_layer_norm(x.transpose(0, 1), [8], w, None, 0.1)",
     "x = mk.randn(3, 4, 8); w = mk.randn(8)")
case("layer_norm_mixed", "layer_norm", "T.native_layer_norm(x, [8], w, b, 1e-5)",
     "x = mk.randn(3, 8, dtype='bfloat16'); w = mk.randn(8); b = mk.randn(8)")
case("layer_norm_numel0", "layer_norm", "T.native_layer_norm(x, [4], None, None, 1e-5)[0]",
     "x = mk.randn(0, 3, 4)")
case("rms_norm_noweight", "rms_norm", "F.rms_norm(x, (4, 8))", "x = mk.randn(3, 4, 8)", "trace")
case("rms_norm_mixed", "rms_norm", "F.rms_norm(x, (8,), w)",
     "x = mk.randn(3, 8, dtype='bfloat16'); w = mk.randn(8)", "trace")
case("rms_norm_f64w", "rms_norm", "F.rms_norm(x, (8,), w)",
     "x = mk.randn(3, 8); w = mk.randn(8, dtype='float64')")
case("batch_norm_F_train", "batch_norm", "(T.batch_norm(x, w, b, rm, rv, True, 0.3, 1e-3, False), rm, rv)",
     "x = mk.randn(4, 3, 6); w = mk.randn(3); b = mk.randn(3); rm = mk.randn(3); "
     "rv = mk.rand(3) + 0.5", "trace")
case("batch_norm_F_eval", "batch_norm", "T.batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5, False)",
     "x = mk.randn(4, 3, 6, 2); w = mk.randn(3); b = mk.randn(3); rm = mk.randn(3); "
     "rv = mk.rand(3) + 0.5", "trace")
case("batch_norm_nostats", "batch_norm", "T.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False)",
     "x = mk.randn(4, 3, 6)", "trace")
case("batch_norm_legit_nostats", "batch_norm",
     "T.ops.aten._native_batch_norm_legit.no_stats(x, None, None, True, 0.1, 1e-5)",
     "x = mk.randn(4, 3, 6)")
case("batch_norm_legit_notrain", "batch_norm",
     "T.ops.aten._native_batch_norm_legit_no_training(x, None, None, rm, rv, 0.1, 1e-5)",
     "x = mk.randn(4, 3, 6); rm = mk.randn(3); rv = mk.rand(3) + 0.5")
case("batch_norm_mixed", "batch_norm", "(T.native_batch_norm(x, w, b, rm, rv, True, 0.1, 1e-5), rm)",
     "x = mk.randn(4, 3, 6, dtype='bfloat16'); w = mk.randn(3); b = mk.randn(3); "
     "rm = mk.randn(3); rv = mk.rand(3) + 0.5")
case("batch_norm_channels_last", "batch_norm",
     "T.batch_norm(x.contiguous(memory_format=T.channels_last), None, None, rm, rv, False, 0.1, 1e-5, False)",
     "x = mk.randn(2, 3, 4, 5); rm = mk.randn(3); rv = mk.rand(3) + 0.5")
case("batch_norm_empty", "batch_norm", "T.batch_norm(x, w, b, rm, rv, False, 0.1, 1e-5, False)",
     "x = mk.randn(0, 3, 4); w = mk.randn(3); b = mk.randn(3); rm = mk.randn(3); rv = mk.rand(3)",
     "trace")
case("group_norm_F", "group_norm", "T.group_norm(x, 2, w, b)",
     "x = mk.randn(2, 4, 3, 3); w = mk.randn(4); b = mk.randn(4)", "trace")
case("group_norm_F_noaffine", "group_norm", "T.group_norm(x, 4)", "x = mk.randn(2, 4, 7)", "trace")
case("group_norm_channels_last", "group_norm", "T.group_norm(x.contiguous(memory_format=T.channels_last), 2)",
     "x = mk.randn(2, 4, 3, 3)", "trace")
_ERRS3 = {
    "bn_running": "T.batch_norm(mk.randn(2, 3, 4), None, None, mk.randn(4), mk.rand(3), False, 0.1, 1e-5, False)",
    "bn_eval_nostats": "T.batch_norm(mk.randn(2, 3, 4), None, None, None, None, False, 0.1, 1e-5, False)",
    "bn_weight": "T.batch_norm(mk.randn(2, 3, 4), mk.randn(2), None, mk.randn(3), mk.rand(3), False, 0.1, 1e-5, False)",
    "bn_int": "T.native_batch_norm(mk.randint(0, 3, (2, 3, 4)), None, None, None, None, True, 0.1, 1e-5)",
    "bn_dtype": "T.native_batch_norm(mk.randn(2, 3, 4), mk.randn(3), mk.randn(3, dtype='float64'), None, None, True, 0.1, 1e-5)",
    "gn_groups": "T.group_norm(mk.randn(2, 4, 3), 3)",
    "gn_groups0": "T.group_norm(mk.randn(2, 4, 3), 0)",
    "gn_weight": "T.group_norm(mk.randn(2, 4, 3), 2, mk.randn(3))",
    "gn_int": "T.group_norm(mk.randint(0, 3, (2, 4, 3)), 2)",
}
for _n, _e in _ERRS3.items():
    case(f"err_{_n}", "errors", _e)

# embedding, dropout, one_hot
for dt in ("float32", "bfloat16", "int64"):
    case(f"embedding_{dt}", "embedding", "F.embedding(i, w)",
         f"w = mk.randn(10, 6, dtype='{dt}') if '{dt}' != 'int64' else mk.randint(0, 9, (10, 6)); "
         "i = mk.randint(0, 10, (2, 7))", "trace")
case("embedding_int32_0d", "embedding", "F.embedding(i, w)",
     "w = mk.randn(10, 6); i = mk.randint(0, 10, (), 'int32')")
case("embedding_noncontig", "embedding", "F.embedding(i, w.t())",
     "w = mk.randn(6, 10); i = mk.randint(0, 10, (5,))")
for dt in ("float32", "float64", "bfloat16", "float16"):
    case(f"native_dropout_{dt}", "dropout", "T.native_dropout(x, 0.3, True)",
         f"x = mk.randn(5, 40, dtype='{dt}')", "seed", "exact")
    case(f"dropout_{dt}", "dropout", "F.dropout(x, 0.25)", f"x = mk.randn(7, 33, dtype='{dt}')",
         "seed", "trace", "exact")
case("native_dropout_eval", "dropout", "T.native_dropout(x, 0.3, False)", "x = mk.randn(5, 4)",
     "seed", "exact")
case("native_dropout_transposed", "dropout", "T.native_dropout(x.t(), 0.5, None)",
     "x = mk.randn(6, 9)", "seed", "exact")
case("native_dropout_empty", "dropout", "T.native_dropout(x, 0.5, True)", "x = T.zeros(0, 3)",
     "seed", "exact")
case("dropout_eval", "dropout", "F.dropout(x, 0.5, training=False)", "x = mk.randn(3, 4)",
     "seed", "trace", "exact")
case("dropout_p1", "dropout", "F.dropout(x, 1.0)", "x = mk.randn(3, 4)", "seed", "trace", "exact")
case("dropout_inplace", "dropout", "F.dropout(x, 0.5, inplace=True)", "x = mk.randn(3, 4)",
     "seed", "trace", "exact")
case("dropout2d", "dropout", "F.dropout2d(x, 0.5)", "x = mk.randn(2, 5, 3, 3)",
     "seed", "trace", "exact")
case("alpha_dropout", "dropout", "F.alpha_dropout(x, 0.2, True)", "x = mk.randn(4, 6)",
     "seed", "trace", "exact")
case("feature_alpha_dropout", "dropout", "F.feature_alpha_dropout(x, 0.2, True)",
     "x = mk.randn(4, 6, 2)", "seed", "trace", "exact")
case("one_hot", "one_hot", "F.one_hot(i)", "i = mk.randint(0, 5, (3, 4))", "trace")
case("one_hot_n", "one_hot", "F.one_hot(i, 7)", "i = mk.randint(0, 5, (6,))", "trace")
case("one_hot_empty", "one_hot", "F.one_hot(i, 4).shape", "i = mk.randint(0, 5, (0, 2))")


# scaled_dot_product_attention: backend choice and the operators dispatched, flash and math
_QKV = "q = mk.randn(2, 4, 5, 16, dtype='{dt}'); k = mk.randn(2, 4, 7, 16, dtype='{dt}'); " \
       "v = mk.randn(2, 4, 7, 16, dtype='{dt}')"
for dt in FLOAT_DTYPES:
    case(f"sdpa_{dt}", "sdpa", "F.scaled_dot_product_attention(q, k, v)", _QKV.format(dt=dt),
         "trace")
    case(f"sdpa_causal_{dt}", "sdpa", "F.scaled_dot_product_attention(q, k, v, is_causal=True)",
         _QKV.format(dt=dt), "trace")
    case(f"sdpa_mask_{dt}", "sdpa", "F.scaled_dot_product_attention(q, k, v, attn_mask=m)",
         _QKV.format(dt=dt) + f"; m = mk.randn(2, 1, 5, 7, dtype='{dt}')", "trace")
    case(f"sdpa_math_{dt}", "sdpa", "F.scaled_dot_product_attention(q, k, v, attn_mask=m)",
         _QKV.format(dt=dt) + "; m = mk.randn(1, 5, 7)", "trace")
    case(f"sdpa_flash_direct_{dt}", "sdpa",
         "T.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, is_causal=True, scale=0.3)",
         _QKV.format(dt=dt))
case("sdpa_boolmask", "sdpa", "F.scaled_dot_product_attention(q, k, v, attn_mask=m)",
     _QKV.format(dt="float32") + "; m = mk.randn(5, 7) > 0", "trace")
case("sdpa_boolmask_bf16", "sdpa", "F.scaled_dot_product_attention(q, k, v, attn_mask=m)",
     _QKV.format(dt="bfloat16") + "; m = mk.randn(5, 7) > 0", "trace")
case("sdpa_gqa", "sdpa", "F.scaled_dot_product_attention(q, k, v, enable_gqa=True)",
     "q = mk.randn(1, 6, 3, 8); k = mk.randn(1, 2, 9, 8); v = mk.randn(1, 2, 9, 8)", "trace")
case("sdpa_gqa_causal_decode", "sdpa",
     "F.scaled_dot_product_attention(q.transpose(1, 2), k, v, is_causal=False, scale=0.125, "
     "enable_gqa=True)",
     "q = mk.randn(1, 1, 9, 64); k = mk.randn(1, 3, 40, 64); v = mk.randn(1, 3, 40, 64)", "trace")
case("sdpa_gqa_math", "sdpa",
     "F.scaled_dot_product_attention(q, k, v, attn_mask=m, enable_gqa=True)",
     "q = mk.randn(1, 6, 3, 8); k = mk.randn(1, 2, 9, 8); v = mk.randn(1, 2, 9, 8); "
     "m = mk.randn(1, 3, 9)", "trace")
case("sdpa_math_causal_gqa", "sdpa",
     "F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)",
     "q = mk.randn(6, 3, 8); k = mk.randn(2, 9, 8); v = mk.randn(2, 9, 8)", "trace")
case("sdpa_3d", "sdpa", "F.scaled_dot_product_attention(q, k, v)",
     "q = mk.randn(4, 3, 8); k = mk.randn(4, 5, 8); v = mk.randn(4, 5, 8)", "trace")
case("sdpa_neg_scale", "sdpa", "F.scaled_dot_product_attention(q, k, v, attn_mask=m, scale=-0.2)",
     _QKV.format(dt="float32") + "; m = mk.randn(2, 1, 5, 7)", "trace")
case("sdpa_fully_masked", "sdpa", "F.scaled_dot_product_attention(q, k, v, attn_mask=m)",
     _QKV.format(dt="float32") + "; m = T.zeros(5, 7); m[1] = float('-inf')", "trace")
case("sdpa_fully_masked_math", "sdpa", "F.scaled_dot_product_attention(q, k, v, attn_mask=m)",
     _QKV.format(dt="float32") + "; m = T.zeros(1, 5, 7); m[0, 2] = float('-inf')", "trace")
case("sdpa_flash_lse_masked", "sdpa",
     "T.ops.aten._scaled_dot_product_flash_attention_for_cpu(q, k, v, attn_mask=m)",
     _QKV.format(dt="float32") + "; m = T.zeros(5, 7); m[3] = float('-inf')")
case("sdpa_causal_long_q", "sdpa", "F.scaled_dot_product_attention(q, k, v, is_causal=True)",
     "q = mk.randn(1, 2, 9, 8); k = mk.randn(1, 2, 4, 8); v = mk.randn(1, 2, 4, 8)", "trace")
case("sdpa_noncontig_last", "sdpa", "F.scaled_dot_product_attention(q.transpose(-1, -2), k, v)",
     "q = mk.randn(2, 4, 16, 5); k = mk.randn(2, 4, 7, 16); v = mk.randn(2, 4, 7, 16)", "trace")
case("sdpa_vdim", "sdpa", "F.scaled_dot_product_attention(q, k, v)",
     "q = mk.randn(2, 4, 5, 16); k = mk.randn(2, 4, 7, 16); v = mk.randn(2, 4, 7, 6)", "trace")
case("sdpa_empty_q", "sdpa", "F.scaled_dot_product_attention(q, k, v)",
     "q = mk.randn(2, 4, 0, 16); k = mk.randn(2, 4, 7, 16); v = mk.randn(2, 4, 7, 16)", "trace")
case("sdpa_dropout", "sdpa", "F.scaled_dot_product_attention(q, k, v, dropout_p=0.3)",
     _QKV.format(dt="float32"), "trace", "seed")
_ERRS4 = {
    "sdpa_dtype": "F.scaled_dot_product_attention(mk.randn(1, 2, 3, 4), mk.randn(1, 2, 3, 4, "
                  "dtype='float64'), mk.randn(1, 2, 3, 4))",
    "sdpa_dim": "F.scaled_dot_product_attention(mk.randn(4), mk.randn(4), mk.randn(4))",
    "sdpa_mask_dtype": "F.scaled_dot_product_attention(mk.randn(1, 2, 3, 4), mk.randn(1, 2, 3, 4), "
                       "mk.randn(1, 2, 3, 4), attn_mask=mk.randn(3, 3, dtype='float64'))",
    "sdpa_causal_mask": "F.scaled_dot_product_attention(mk.randn(2, 3, 4), mk.randn(2, 3, 4), "
                        "mk.randn(2, 3, 4), attn_mask=mk.randn(3, 3), is_causal=True)",
    "sdpa_heads": "F.scaled_dot_product_attention(mk.randn(1, 4, 3, 8), mk.randn(1, 2, 5, 8), "
                  "mk.randn(1, 2, 5, 8))",
    "sdpa_gqa_heads": "F.scaled_dot_product_attention(mk.randn(1, 5, 3, 8), mk.randn(1, 2, 5, 8), "
                      "mk.randn(1, 2, 5, 8), enable_gqa=True)",
    "flash_int": "T.ops.aten._scaled_dot_product_flash_attention_for_cpu(mk.randint(0, 3, (1, 2, 3, 4)), "
                 "mk.randint(0, 3, (1, 2, 3, 4)), mk.randint(0, 3, (1, 2, 3, 4)))",
    "flash_3d": "T.ops.aten._scaled_dot_product_flash_attention_for_cpu(mk.randn(2, 3, 4), "
                "mk.randn(2, 3, 4), mk.randn(2, 3, 4))",
    "flash_dropout": "T.ops.aten._scaled_dot_product_flash_attention_for_cpu(mk.randn(1, 2, 3, 4), "
                     "mk.randn(1, 2, 3, 4), mk.randn(1, 2, 3, 4), 0.5)",
}
for _n, _e in _ERRS4.items():
    case(f"err_{_n}", "errors", _e)


# convolution
for dt in FLOAT_DTYPES:
    case(f"conv2d_{dt}", "conv", "F.conv2d(x, w, b, stride=2, padding=1, dilation=1, groups=2)",
         f"x = mk.randn(2, 4, 9, 8, dtype='{dt}'); w = mk.randn(6, 2, 3, 3, dtype='{dt}'); "
         f"b = mk.randn(6, dtype='{dt}')", "trace")
    case(f"conv1d_{dt}", "conv", "F.conv1d(x, w, None, padding=2, dilation=2)",
         f"x = mk.randn(3, 4, 11, dtype='{dt}'); w = mk.randn(5, 4, 3, dtype='{dt}')", "trace")
    case(f"conv_transpose2d_{dt}", "conv",
         "F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)",
         f"x = mk.randn(2, 4, 5, 4, dtype='{dt}'); w = mk.randn(4, 3, 3, 3, dtype='{dt}'); "
         f"b = mk.randn(6, dtype='{dt}')", "trace")
case("conv3d", "conv", "F.conv3d(x, w, stride=(1, 2, 1), padding=1)",
     "x = mk.randn(1, 2, 4, 5, 6); w = mk.randn(3, 2, 3, 2, 3)", "trace")
case("conv2d_unbatched", "conv", "F.conv2d(x, w)", "x = mk.randn(2, 5, 5); w = mk.randn(3, 2, 2, 2)",
     "trace")
case("conv2d_same", "conv", "F.conv2d(x, w, padding='same')",
     "x = mk.randn(1, 2, 5, 5); w = mk.randn(3, 2, 3, 3)", "trace")
case("conv2d_same_even", "conv", "F.conv2d(x, w, padding='same', dilation=1)",
     "x = mk.randn(1, 2, 5, 5); w = mk.randn(3, 2, 2, 4)", "trace")
case("conv2d_valid", "conv", "F.conv2d(x, w, padding='valid')",
     "x = mk.randn(1, 2, 5, 5); w = mk.randn(3, 2, 2, 2)", "trace")
case("conv2d_channels_last", "conv", "F.conv2d(x.contiguous(memory_format=T.channels_last), w, b)",
     "x = mk.randn(2, 3, 6, 6); w = mk.randn(4, 3, 3, 3); b = mk.randn(4)")
case("conv2d_cl_weight", "conv", "F.conv2d(x, w.contiguous(memory_format=T.channels_last))",
     "x = mk.randn(2, 3, 6, 6); w = mk.randn(4, 3, 3, 3)")
case("conv2d_depthwise", "conv", "F.conv2d(x, w, groups=4, padding=1)",
     "x = mk.randn(2, 4, 6, 6); w = mk.randn(4, 1, 3, 3)")
case("conv2d_int", "conv", "F.conv2d(x, w)",
     "x = mk.randint(-5, 5, (1, 2, 4, 4)); w = mk.randint(-5, 5, (3, 2, 2, 2))")
case("conv2d_empty_batch", "conv", "F.conv2d(x, w, b)",
     "x = T.zeros(0, 2, 4, 4); w = mk.randn(3, 2, 2, 2); b = mk.randn(3)")
case("conv_direct", "conv", "T.convolution(x, w, b, [1], [1], [1], False, [0], 1)",
     "x = mk.randn(1, 2, 4, 4); w = mk.randn(3, 2, 2, 2); b = mk.randn(3)")
case("conv_transpose1d", "conv", "F.conv_transpose1d(x, w, stride=3, dilation=2)",
     "x = mk.randn(2, 3, 5); w = mk.randn(3, 2, 3)", "trace")
case("conv_transpose3d", "conv", "F.conv_transpose3d(x, w, stride=2)",
     "x = mk.randn(1, 2, 2, 3, 2); w = mk.randn(2, 3, 2, 2, 2)", "trace")
_ERRS5 = {
    "conv_dtype_w": "F.conv2d(mk.randn(1, 2, 4, 4), mk.randn(3, 2, 2, 2, dtype='float64'))",
    "conv_dtype_b": "F.conv2d(mk.randn(1, 2, 4, 4), mk.randn(3, 2, 2, 2), mk.randn(3, dtype='float64'))",
    "conv_channels": "F.conv2d(mk.randn(1, 3, 4, 4), mk.randn(3, 2, 2, 2))",
    "conv_groups": "F.conv2d(mk.randn(1, 4, 4, 4), mk.randn(3, 2, 2, 2), groups=2)",
    "conv_groups0": "F.conv2d(mk.randn(1, 4, 4, 4), mk.randn(4, 2, 2, 2), groups=0)",
    "conv_kernel": "F.conv2d(mk.randn(1, 2, 4, 4), mk.randn(3, 2, 5, 5))",
    "conv_bias": "F.conv2d(mk.randn(1, 2, 4, 4), mk.randn(3, 2, 2, 2), mk.randn(4))",
    "conv_dims": "F.conv2d(mk.randn(4, 4), mk.randn(3, 2, 2, 2))",
    "conv_wdims": "T.convolution(mk.randn(1, 2, 4, 4), mk.randn(3, 2, 2), None, [1], [0], [1], False, [0], 1)",
    "conv_stride0": "F.conv2d(mk.randn(1, 2, 4, 4), mk.randn(3, 2, 2, 2), stride=0)",
    "conv_padneg": "F.conv2d(mk.randn(1, 2, 4, 4), mk.randn(3, 2, 2, 2), padding=-1)",
    "conv_stride_list": "T.convolution(mk.randn(1, 2, 4, 4), mk.randn(3, 2, 2, 2), None, [1, 1, 1], [0], [1], False, [0], 1)",
    "conv_same_stride": "F.conv2d(mk.randn(1, 2, 4, 4), mk.randn(3, 2, 2, 2), padding='same', stride=2)",
    "conv_pad_str": "F.conv2d(mk.randn(1, 2, 4, 4), mk.randn(3, 2, 2, 2), padding='foo')",
    "conv_empty_out": "F.conv2d(mk.randn(1, 2, 4, 4), mk.randn(0, 2, 2, 2))",
    "convT_ch": "F.conv_transpose2d(mk.randn(1, 3, 4, 4), mk.randn(2, 3, 3, 3))",
    "convT_outpad": "F.conv_transpose2d(mk.randn(1, 2, 4, 4), mk.randn(2, 3, 3, 3), output_padding=1)",
}
for _n, _e in _ERRS5.items():
    case(f"err_{_n}", "errors", _e)

# pooling
for dt in FLOAT_DTYPES:
    case(f"max_pool2d_{dt}", "pool", "F.max_pool2d(x, 3, 2, 1, return_indices=True)",
         f"x = mk.randn(2, 3, 9, 8, dtype='{dt}')", "trace")
    case(f"avg_pool2d_{dt}", "pool", "F.avg_pool2d(x, 3, 2, 1)", f"x = mk.randn(2, 3, 9, 8, dtype='{dt}')",
         "trace")
    case(f"adaptive_avg_pool2d_{dt}", "pool", "F.adaptive_avg_pool2d(x, (3, 5))",
         f"x = mk.randn(2, 3, 9, 7, dtype='{dt}')", "trace")
case("max_pool2d_ceil_dilation", "pool", "F.max_pool2d(x, 2, 2, 1, 2, ceil_mode=True, return_indices=True)",
     "x = mk.randn(1, 2, 7, 8)")
case("max_pool2d_nan", "pool", "F.max_pool2d(x, 2, return_indices=True)",
     "x = mk.tensor([[[[1., float('nan'), 2., 3.], [float('nan'), 0., 5., 5.]]]])")
case("max_pool2d_neginf", "pool", "F.max_pool2d(x, 3, 1, 1, return_indices=True)",
     "x = T.full((1, 1, 3, 3), float('-inf'))")
case("max_pool2d_int", "pool", "F.max_pool2d(x, 2, 1, return_indices=True)",
     "x = mk.randint(-9, 9, (1, 2, 4, 5))")
case("max_pool2d_3d", "pool", "F.max_pool2d(x, 2)", "x = mk.randn(3, 6, 6)", "trace")
case("max_pool2d_cl", "pool", "F.max_pool2d(x.contiguous(memory_format=T.channels_last), 2, return_indices=True)",
     "x = mk.randn(2, 3, 4, 6)")
case("max_pool1d", "pool", "F.max_pool1d(x, 3, 2, 1)", "x = mk.randn(2, 3, 10)", "trace")
case("max_pool1d_indices", "pool", "F.max_pool1d(x, 2, return_indices=True)", "x = mk.randn(2, 3, 9)",
     "trace")
case("avg_pool2d_ceil_nopad", "pool", "F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False)",
     "x = mk.randn(1, 2, 8, 7)")
case("avg_pool2d_divisor", "pool", "F.avg_pool2d(x, 2, divisor_override=3)", "x = mk.randn(1, 2, 6, 6)")
case("avg_pool2d_int", "pool", "F.avg_pool2d(x, 3, 1, 1)", "x = mk.randint(-50, 50, (1, 2, 5, 5))")
case("avg_pool2d_cl", "pool", "F.avg_pool2d(x.contiguous(memory_format=T.channels_last), 2)",
     "x = mk.randn(2, 3, 4, 6)")
case("avg_pool1d", "pool", "F.avg_pool1d(x, 3, 2, 1)", "x = mk.randn(2, 3, 10)", "trace")
case("adaptive_avg_pool2d_1", "pool", "F.adaptive_avg_pool2d(x, 1)", "x = mk.randn(2, 3, 5, 4)", "trace")
case("adaptive_avg_pool2d_cl", "pool", "F.adaptive_avg_pool2d(x.contiguous(memory_format=T.channels_last), 2)",
     "x = mk.randn(2, 3, 4, 6)")
case("adaptive_avg_pool2d_up", "pool", "F.adaptive_avg_pool2d(x, (5, 7))", "x = mk.randn(1, 2, 3, 4)")
case("adaptive_avg_pool1d", "pool", "F.adaptive_avg_pool1d(x, 4)", "x = mk.randn(2, 3, 10)", "trace")
_ERRS6 = {
    "mp_bool": "F.max_pool2d(T.ones(1, 1, 4, 4, dtype=T.bool), 2)",
    "mp_2d": "F.max_pool2d(mk.randn(4, 4), 2)",
    "mp_pad": "F.max_pool2d(mk.randn(1, 1, 4, 4), 2, padding=2)",
    "mp_small": "F.max_pool2d(mk.randn(1, 1, 2, 2), 3)",
    "mp_stride0": "T.max_pool2d(mk.randn(1, 1, 4, 4), [2], [0])",
    "mp_ks3": "T.max_pool2d(mk.randn(1, 1, 4, 4), [2, 2, 2])",
    "mp_emptyC": "F.max_pool2d(mk.randn(1, 0, 4, 4), 2)",
    "ap_bool": "F.avg_pool2d(T.ones(1, 1, 4, 4, dtype=T.bool), 2)",
    "ap_div0": "F.avg_pool2d(mk.randn(1, 1, 4, 4), 2, divisor_override=0)",
    "aap_int": "F.adaptive_avg_pool2d(T.ones(1, 1, 4, 4, dtype=T.long), 2)",
    "aap_2d": "F.adaptive_avg_pool2d(mk.randn(4, 4), 2)",
    "aap_neg": "T._C._nn.adaptive_avg_pool2d(mk.randn(1, 1, 4, 4), [-1, 2])",
    "mp1d_pad": "F.max_pool1d(mk.randn(1, 2, 8), 2, padding=3)",
}
for _n, _e in _ERRS6.items():
    case(f"err_{_n}", "errors", _e)

# losses
for dt in FLOAT_DTYPES:
    case(f"cross_entropy_{dt}", "loss", "F.cross_entropy(x, t)",
         f"x = mk.randn(6, 5, dtype='{dt}'); t = mk.randint(0, 5, (6,))", "trace")
    case(f"nll_loss_w_{dt}", "loss", "F.nll_loss(x, t, weight=w, ignore_index=2, reduction='mean')",
         f"x = mk.randn(8, 5, dtype='{dt}'); t = mk.randint(0, 5, (8,)); w = mk.rand(5, dtype='{dt}')")
    case(f"mse_loss_{dt}", "loss", "F.mse_loss(a, b)", f"a = mk.randn(4, 5, dtype='{dt}'); b = mk.randn(4, 5, dtype='{dt}')")
    case(f"bce_{dt}", "loss", "F.binary_cross_entropy(a, b)",
         f"a = mk.rand(4, 5, dtype='{dt}'); b = mk.rand(4, 5, dtype='{dt}')")
    case(f"bce_logits_{dt}", "loss", "F.binary_cross_entropy_with_logits(a, b, pos_weight=p)",
         f"a = mk.randn(4, 5, dtype='{dt}') * 3; b = mk.rand(4, 5, dtype='{dt}'); p = mk.rand(5, dtype='{dt}')")
for red in ("none", "sum", "mean"):
    case(f"nll_loss_{red}", "loss", f"F.nll_loss(x, t, reduction='{red}')",
         "x = mk.randn(7, 4); t = mk.randint(0, 4, (7,))", "trace")
    case(f"nll_loss2d_{red}", "loss", f"F.nll_loss(x, t, reduction='{red}', ignore_index=1)",
         "x = mk.randn(2, 3, 4, 5); t = mk.randint(0, 3, (2, 4, 5))", "trace")
    case(f"nll_loss_3d_{red}", "loss", f"F.nll_loss(x, t, reduction='{red}')",
         "x = mk.randn(2, 3, 4); t = mk.randint(0, 3, (2, 4))", "trace")
    case(f"cross_entropy_probs_{red}", "loss", f"F.cross_entropy(x, p, reduction='{red}')",
         "x = mk.randn(4, 5); p = mk.rand(4, 5)", "trace")
    case(f"cross_entropy_smooth_{red}", "loss",
         f"F.cross_entropy(x, t, reduction='{red}', label_smoothing=0.1, ignore_index=0)",
         "x = mk.randn(6, 5); t = mk.randint(0, 5, (6,))", "trace")
    case(f"cross_entropy_smooth_w_{red}", "loss",
         f"F.cross_entropy(x, t, weight=w, reduction='{red}', label_smoothing=0.2)",
         "x = mk.randn(6, 5); t = mk.randint(0, 5, (6,)); w = mk.rand(5)", "trace")
    _r = {"none": 0, "mean": 1, "sum": 2}[red]  # (F.mse_loss/l1_loss also broadcast_tensors first)
    case(f"mse_{red}", "loss", f"T._C._nn.mse_loss(a, b, {_r})", "a = mk.randn(3, 4); b = mk.randn(3, 4)",
         "trace")
    case(f"l1_{red}", "loss", f"T._C._nn.l1_loss(a, b, {_r})", "a = mk.randn(3, 4); b = mk.randn(3, 4)",
         "trace")
    case(f"kl_div_{red}", "loss", f"F.kl_div(a, b, reduction='{red}')",
         "a = mk.randn(3, 4); b = mk.rand(3, 4)", "trace")
    case(f"bce_w_{red}", "loss", f"F.binary_cross_entropy(a, b, weight=w, reduction='{red}')",
         "a = mk.rand(3, 4); b = mk.rand(3, 4); w = mk.rand(4)")
case("cross_entropy_probs_w", "loss", "F.cross_entropy(x, p, weight=w)",
     "x = mk.randn(4, 5, 3); p = mk.rand(4, 5, 3); w = mk.rand(5)", "trace")
case("cross_entropy_1d", "loss", "F.cross_entropy(x, t)", "x = mk.randn(5); t = mk.tensor(3)", "trace")
case("cross_entropy_4d", "loss", "F.cross_entropy(x, t)", "x = mk.randn(2, 3, 2, 2); t = mk.randint(0, 3, (2, 2, 2))",
     "trace")
case("nll_all_ignored", "loss", "F.nll_loss(x, t)", "x = mk.randn(3, 4); t = mk.tensor([-100, -100, -100])")
case("nll_empty_mean", "loss", "F.nll_loss(x, t)", "x = T.zeros(0, 4); t = T.zeros(0, dtype=T.long)")
case("nll_byte_target", "loss", "T.ops.aten.nll_loss_forward(x, t, None, 2, -100)",
     "x = mk.randn(3, 4); t = mk.tensor([1, 2, 3]).to(T.uint8)")
case("mse_bcast", "loss", "T._C._nn.mse_loss(a, b, 0)", "a = mk.randn(3, 1); b = mk.randn(3)")
case("mse_mixed", "loss", "F.mse_loss(a, b)", "a = mk.randn(3); b = mk.randn(3, dtype='float64')")
case("bce_logits_w_mixed", "loss", "F.binary_cross_entropy_with_logits(a, b, weight=w, reduction='none')",
     "a = mk.randn(3, 4); b = mk.rand(3, 4, dtype='float64'); w = mk.rand(4)")
case("bce_extremes", "loss", "F.binary_cross_entropy(a, b, reduction='none')",
     "a = mk.tensor([0., 1., 0.5, 1e-30]); b = mk.tensor([1., 0., 0.5, 1.])")
_ERRS7 = {
    "nll_float_target": "F.nll_loss(mk.randn(3, 4), mk.randn(3))",
    "nll_oob": "F.nll_loss(mk.randn(3, 4), mk.tensor([1, 2, 4]))",
    "nll_neg": "F.nll_loss(mk.randn(3, 4), mk.tensor([1, 2, -3]))",
    "nll_size": "F.nll_loss(mk.randn(3, 4), mk.tensor([1, 2]))",
    "nll_w": "F.nll_loss(mk.randn(3, 4), mk.tensor([1, 2, 0]), weight=mk.randn(3))",
    "nll_3dtarget": "T.ops.aten.nll_loss_forward(mk.randn(3, 4), mk.tensor([[1], [2], [0]]), None, 1, -100)",
    "nll_int_input": "F.nll_loss(T.ones(3, 4, dtype=T.long), mk.tensor([1, 2, 0]))",
    "nll_0d": "F.nll_loss(mk.tensor(1.0), mk.tensor(1))",
    "nll_nd_bs": "F.nll_loss(mk.randn(3, 4, 5), T.zeros(2, 5, dtype=T.long))",
    "nll_nd_tsize": "F.nll_loss(mk.randn(3, 4, 5), T.zeros(3, 4, dtype=T.long))",
    "nll2d_target": "T.ops.aten.nll_loss2d_forward(mk.randn(2, 3, 4, 4), T.zeros(2, 4, dtype=T.long), None, 1, -100)",
    "nll2d_w": "F.nll_loss(mk.randn(2, 3, 4, 4), T.zeros(2, 4, 4, dtype=T.long), weight=mk.randn(2))",
    "nll2d_oob": "F.nll_loss(mk.randn(2, 3, 4, 4), T.full((2, 4, 4), 5, dtype=T.long))",
    "ce_probs_int": "F.cross_entropy(mk.randn(3, 4), T.ones(3, 4, dtype=T.long))",
    "ce_probs_ign": "F.cross_entropy(mk.randn(3, 4), mk.randn(3, 4), ignore_index=1)",
    "ce_ls": "F.cross_entropy(mk.randn(3, 4), mk.tensor([1, 2, 0]), label_smoothing=1.5)",
    "mse_int": "T._C._nn.mse_loss(T.ones(3, dtype=T.long), T.ones(3, dtype=T.long))",
    "mse_bad": "T._C._nn.mse_loss(mk.randn(3), mk.randn(4))",
    "bce_range": "F.binary_cross_entropy(mk.randn(3) + 5, mk.rand(3))",
    "bce_trange": "F.binary_cross_entropy(mk.rand(3), mk.rand(3) + 5)",
    "bce_mixed": "T._C._nn.binary_cross_entropy(mk.rand(3), mk.rand(3, dtype='float64'))",
    "kl_int": "F.kl_div(T.ones(3, dtype=T.long), T.ones(3, dtype=T.long))",
}
for _n, _e in _ERRS7.items():
    case(f"err_{_n}", "errors", _e)
# upstream's Python bindings parse the default ``reduction=at::Reduction::Mean`` with atol(),
# which gives 0 (none); torch.ops.aten.* parse the schema and get Mean
case("loss_binding_default_reduction", "loss",
     "(T.binary_cross_entropy_with_logits(a, b), T._C._nn.mse_loss(a, b), "
     "T.ops.aten.mse_loss(a, b))", "a = mk.randn(3, dtype='float64'); b = mk.rand(3)")


# contractions: outer, inner, tensordot, einsum, bilinear; instance_norm
case("outer", "contract", "T.outer(a, b)", "a = mk.randn(5); b = mk.randn(7)", "trace")
case("inner", "contract", "T.inner(a, b)", "a = mk.randn(3, 5); b = mk.randn(2, 4, 5)", "trace")
case("inner_scalar", "contract", "T.inner(a, b)", "a = mk.randn(3, 5); b = mk.tensor(2.0)", "trace")
case("tensordot", "contract", "T.tensordot(a, b, dims=([1, 0], [0, 2]))",
     "a = mk.randn(3, 4, 5); b = mk.randn(4, 6, 3)", "trace")
case("tensordot_int", "contract", "T.tensordot(a, b, 2)", "a = mk.randn(2, 3, 4); b = mk.randn(3, 4, 5)",
     "trace")
case("tensordot_bcast", "contract", "T.tensordot(a, b, dims=([1], [0]))",
     "a = mk.randn(3, 1); b = mk.randn(4, 5)", "trace")
case("linalg_matmul", "contract", "T.linalg.matmul(a, b)", "a = mk.randn(2, 3, 4); b = mk.randn(4, 5)",
     "trace")
_EINSUM = {
    "mm": ("ij,jk->ik", "(3, 4)", "(4, 5)"), "implicit": ("ij,jk", "(3, 4)", "(4, 5)"),
    "bmm": ("bij,bjk->bik", "(2, 3, 4)", "(2, 4, 5)"), "outer": ("i,j->ij", "(3,)", "(4,)"),
    "trace": ("ii->", "(4, 4)", None), "diag": ("ii->i", "(4, 4)", None),
    "sum": ("ijk->j", "(2, 3, 4)", None), "transpose": ("ij->ji", "(2, 3)", None),
    "ellipsis": ("...ij,...jk->...ik", "(2, 1, 3, 4)", "(5, 4, 6)"),
    "attn": ("bhqd,bhkd->bhqk", "(1, 2, 3, 8)", "(1, 2, 5, 8)"),
    "rope": ("i,j->ij", "(6,)", "(4,)"), "bcast": ("ij,ij->i", "(3, 1)", "(3, 4)"),
    "repeated": ("iij,jk->ik", "(3, 3, 4)", "(4, 2)"),
}
for _n, (_eq, _a, _b) in _EINSUM.items():
    _setup = f"a = mk.randn(*{_a})" + (f"; b = mk.randn(*{_b})" if _b else "")
    _args = "a, b" if _b else "a"
    case(f"einsum_{_n}", "contract", f"T.einsum('{_eq}', {_args})", _setup, "trace")
case("einsum_three", "contract", "T.einsum('ij,jk,kl->il', a, b, c)",
     "a = mk.randn(2, 3); b = mk.randn(3, 4); c = mk.randn(4, 5)", "trace")
case("bilinear", "contract", "F.bilinear(a, b, w, bias)",
     "a = mk.randn(2, 3, 4); b = mk.randn(2, 3, 5); w = mk.randn(6, 4, 5); bias = mk.randn(6)", "trace")
case("instance_norm", "batch_norm", "T.instance_norm(x, w, b, rm, rv, True, 0.1, 1e-5, False), rm, rv",
     "x = mk.randn(2, 3, 5); w = mk.randn(3); b = mk.randn(3); rm = mk.randn(3); rv = mk.rand(3) + 1",
     "trace")
_ERRS8 = {
    "outer_2d": "T.outer(mk.randn(2, 3), mk.randn(3))",
    "inner_shape": "T.inner(mk.randn(2, 3), mk.randn(4, 2))",
    "tensordot_size": "T.tensordot(mk.randn(2, 3), mk.randn(4, 5), dims=([1], [0]))",
    "tensordot_len": "T.tensordot(mk.randn(2, 3), mk.randn(3, 5), dims=([1, 0], [0]))",
    "einsum_size": "T.einsum('ij,jk', mk.randn(2, 3), mk.randn(4, 5))",
    "einsum_ops": "T.einsum('ij,jk->ik', mk.randn(2, 3))",
    "einsum_out_rep": "T.einsum('ij->ii', mk.randn(2, 3))",
    "einsum_ell": "T.einsum('...ij,...jk', mk.randn(2, 1, 3), mk.randn(4, 3, 5))",
    "einsum_dims": "T.einsum('ijk->i', mk.randn(2, 3))",
    "einsum_bad_char": "T.einsum('i1->i', mk.randn(2, 3))",
    "bilinear_dims": "F.bilinear(mk.randn(2, 3), mk.randn(2, 3, 4), mk.randn(5, 3, 4))",
    "bilinear_w": "F.bilinear(mk.randn(2, 3), mk.randn(2, 4), mk.randn(5, 4, 4))",
}
for _n, _e in _ERRS8.items():
    case(f"err_{_n}", "errors", _e)


# distances, vecdot, kron; margin and embedding losses
case("cosine_similarity", "distance", "F.cosine_similarity(a, b)", "a = mk.randn(4, 6); b = mk.randn(4, 6)",
     "trace")
case("cosine_similarity_bcast", "distance", "F.cosine_similarity(a, b, dim=-1)",
     "a = mk.randn(3, 1, 6); b = mk.randn(5, 6)", "trace")
case("cosine_similarity_int", "distance", "F.cosine_similarity(a, b, dim=0)",
     "a = mk.randint(0, 5, (4,)); b = mk.randn(4)", "trace")
case("pairwise_distance", "distance", "F.pairwise_distance(a, b, p=3)", "a = mk.randn(4, 6); b = mk.randn(4, 6)",
     "trace")
case("cdist_small", "distance", "T.cdist(a, b, p=1)", "a = mk.randn(2, 5, 3); b = mk.randn(2, 4, 3)", "trace")
case("cdist_p2", "distance", "T.cdist(a, b)", "a = mk.randn(5, 3); b = mk.randn(4, 3)", "trace")
case("cdist_mm", "distance", "T.cdist(a, b)", "a = mk.randn(30, 3); b = mk.randn(4, 3)", "trace")
case("cdist_inf", "distance", "T.cdist(a, b, p=float('inf'))", "a = mk.randn(5, 3); b = mk.randn(4, 3)")
case("linalg_vecdot", "contract", "T.linalg.vecdot(a, b)", "a = mk.randn(3, 5); b = mk.randn(3, 5)", "trace")
case("kron", "contract", "T.kron(a, b)", "a = mk.randn(2, 3); b = mk.randn(4, 1, 2)", "trace")
for red in ("none", "mean", "sum"):
    case(f"hinge_{red}", "loss", f"F.hinge_embedding_loss(x, t, reduction='{red}')",
         "x = mk.randn(8); t = mk.tensor([1, -1, 1, 1, -1, -1, 1, -1])", "trace")
    case(f"cosine_embedding_{red}", "loss", f"F.cosine_embedding_loss(a, b, t, margin=0.1, reduction='{red}')",
         "a = mk.randn(4, 5); b = mk.randn(4, 5); t = mk.tensor([1, -1, 1, -1])", "trace")
    case(f"margin_ranking_{red}", "loss", f"F.margin_ranking_loss(a, b, t, margin=0.2, reduction='{red}')",
         "a = mk.randn(6); b = mk.randn(6); t = mk.tensor([1., -1., 1., 1., -1., 1.])", "trace")
    case(f"poisson_nll_{red}", "loss", f"F.poisson_nll_loss(a, b, reduction='{red}', full=True)",
         "a = mk.randn(6); b = mk.rand(6) * 3", "trace")
    case(f"triplet_{red}", "loss", f"F.triplet_margin_loss(a, p_, n, swap=True, reduction='{red}')",
         "a = mk.randn(4, 5); p_ = mk.randn(4, 5); n = mk.randn(4, 5)", "trace")
case("poisson_nll_nolog", "loss", "F.poisson_nll_loss(a, b, log_input=False)", "a = mk.rand(6) + 0.1; b = mk.rand(6)",
     "trace")


case("adaptive_max_pool2d", "pool", "F.adaptive_max_pool2d(x, (3, 4), return_indices=True)",
     "x = mk.randn(2, 3, 7, 9)")
case("adaptive_max_pool2d_nan", "pool", "F.adaptive_max_pool2d(x, 1, return_indices=True)",
     "x = mk.tensor([[[[1., float('nan'), 2.], [float('nan'), 0., 5.]]]])")
case("adaptive_max_pool1d", "pool", "F.adaptive_max_pool1d(x, 4, return_indices=True)", "x = mk.randn(2, 3, 10)",
     "trace")
# adaptive max pooling's gradient: each output's gradient added at its index, overlapping
# windows summing in output order (a 3-D input, channels-last, upsizing, float16/bfloat16 rounding
# after each addition)
AMP2 = "grads(lambda x: F.adaptive_max_pool2d(x, {size}, return_indices=True), x)"
for _n, _size, _setup in [
        ("4d", "(3, 4)", "x = mk.randn(2, 3, 7, 9)"),
        ("3d_overlap", "(4, 5)", "x = mk.randn(3, 7, 9)"),
        ("upsize", "(9, 11)", "x = mk.randn(2, 2, 5, 6)"),
        ("channels_last", "(5, 4)",
         "x = mk.randn(2, 3, 8, 9).contiguous(memory_format=T.channels_last)"),
        ("ties", "(3, 3)", "x = mk.randint(0, 2, (2, 2, 6, 6)).float()"),
        ("float64", "(4, 4)", "x = mk.randn(2, 3, 7, 7, dtype='float64')"),
        ("bfloat16", "(5, 5)", "x = mk.randn(2, 3, 7, 7, dtype='bfloat16')"),
        ("float16", "(5, 5)", "x = mk.randn(2, 3, 7, 7, dtype='float16')")]:
    case(f"adaptive_max_pool2d_grad_{_n}", "pool", AMP2.format(size=_size),
         _setup + ".requires_grad_()")
case("adaptive_max_pool1d_grad", "pool",
     "grads(lambda x: F.adaptive_max_pool1d(x, 4, return_indices=True), x)",
     "x = mk.randn(2, 3, 11).requires_grad_()")
_AMPB = "T.ops.aten.adaptive_max_pool2d_backward"
for _n, _e in {
        "amp2d_bw_dims": f"{_AMPB}(mk.randn(3, 2), mk.randn(3, 4, 4), T.zeros(3, 2, dtype=T.long))",
        "amp2d_bw_empty": f"{_AMPB}(mk.randn(2, 0, 2, 2), mk.randn(2, 0, 4, 4), "
                          "T.zeros(2, 0, 2, 2, dtype=T.long))",
        "amp2d_bw_index_dims": f"{_AMPB}(mk.randn(2, 3, 2), mk.randn(2, 3, 4, 4), "
                               "T.zeros(2, 3, 2, dtype=T.long))",
        "amp2d_bw_dtype": f"{_AMPB}(mk.randn(2, 3, 2, 2, dtype='float64'), mk.randn(2, 3, 4, 4), "
                          "T.zeros(2, 3, 2, 2, dtype=T.long))",
        "amp2d_bw_index_sizes": f"{_AMPB}(mk.randn(2, 3, 2, 2), mk.randn(2, 3, 4, 4), "
                                "T.zeros(2, 3, 2, 3, dtype=T.long))",
        "amp2d_bw_int": f"{_AMPB}(mk.randint(0, 3, (2, 3, 2, 2)), mk.randint(0, 3, (2, 3, 4, 4)), "
                        "T.zeros(2, 3, 2, 2, dtype=T.long))",
        "amp2d_bw_int_cl_input": f"{_AMPB}(mk.randint(0, 3, (2, 3, 2, 2)), mk.randint(0, 3, "
                                 "(2, 3, 4, 4)).contiguous(memory_format=T.channels_last), "
                                 "T.zeros(2, 3, 2, 2, dtype=T.long))",
        "amp2d_bw_int_cl_grad": f"{_AMPB}(mk.randint(0, 3, (2, 3, 2, 2)).contiguous("
                                "memory_format=T.channels_last), mk.randint(0, 3, (2, 3, 4, 4)), "
                                "T.zeros(2, 3, 2, 2, dtype=T.long))",
        "amp2d_bw_int32_indices": f"{_AMPB}(mk.randn(2, 3, 2, 2), mk.randn(2, 3, 4, 4), "
                                  "T.zeros(2, 3, 2, 2, dtype=T.int32))",
        "amp3d_bw_float_indices": "T.ops.aten.adaptive_max_pool3d_backward("
                                  "mk.randn(1, 2, 2, 2, 2), mk.randn(1, 2, 4, 4, 4), "
                                  "T.zeros(1, 2, 2, 2, 2))",
        # backward kernels whose iterator requires out's dtype to be the inputs'
        "bce_bw_out_dtype": "T.ops.aten.binary_cross_entropy_backward.grad_input(mk.randn(4), "
                            "mk.rand(4) * 0.8 + 0.1, mk.rand(4), None, 1, "
                            "grad_input=T.empty(0, dtype=T.float64))",
        "log_sigmoid_bw_out_dtype": "T.ops.aten.log_sigmoid_backward.grad_input(mk.randn(4), "
                                    "mk.randn(4), mk.rand(4), "
                                    "grad_input=T.empty(0, dtype=T.float64))",
        "amp2d_bw_out_dtype": f"{_AMPB}.grad_input(mk.randn(2, 3, 2, 2), mk.randn(2, 3, 4, 4), "
                              "T.zeros(2, 3, 2, 2, dtype=T.long), "
                              "grad_input=T.empty(0, dtype=T.float64))"}.items():
    case(f"err_{_n}", "errors", _e)
case("kron_out", "contract", "T.kron(a, b, out=o)", "a = mk.randn(2, 3); b = mk.randn(2, 2); o = T.empty(0)")
case("vecdot_out", "contract", "T.linalg.vecdot(a, b, out=o)",
     "a = mk.randn(3, 5); b = mk.randn(3, 5); o = T.empty(3)")


# ------------------------------------------------------------------------------ running

_G, golden, test_agrees_with_upstream = golden_suite(CASES, "nn_golden", errors_family="errors")
_ours, _compare = _G.ours, _G.compare


def test_harness_rejects_a_wrong_value(golden):
    """The comparison can fail: a result perturbed by a few ulp beyond tolerance is rejected,
    and so are a wrong dtype and a wrong stride."""
    doc, arrays = golden
    name = "mm_float32"
    up = doc[name]["low"]
    ours, ours_arrays = _ours(next(c for c in CASES if c[0] == name))
    key = ours["data"]
    bad = dict(ours_arrays)
    bad[key] = ours_arrays[key].copy()
    bad[key].flat[-1] *= 1 + 1e-3
    with pytest.raises(AssertionError):
        _compare(golden, "mm", up, ours, bad, doc[name]["high"])
    with pytest.raises(AssertionError):
        _compare(golden, "mm", up, dict(ours, dtype="float64"), ours_arrays, doc[name]["high"])
    with pytest.raises(AssertionError):
        _compare(golden, "mm", up, dict(ours, stride=[1, 7]), ours_arrays, doc[name]["high"])
    _compare(golden, "mm", up, ours, ours_arrays, doc[name]["high"])
