"""Kernel-layer bugs found in use, each compared with upstream in a separate process."""
from __future__ import annotations


from bugfix_probe import assert_agree

BROADCAST = {
    "add_last_dim": "torch.ones(2, 3) + torch.ones(3, 2)",
    "add_3d": "torch.ones(4, 2, 3) + torch.ones(5, 3, 3)",
    "add_ranks": "torch.ones(3, 1, 2) + torch.ones(4, 3)",
    "copy_": "torch.empty(2, 3).copy_(torch.ones(3, 2))",
    "copy_first_dim": "torch.empty(2, 3).copy_(torch.ones(4, 3))",
    "copy_grows": "torch.empty(3).copy_(torch.ones(2, 3))",
    "broadcast_tensors": "torch.broadcast_tensors(torch.ones(2, 3), torch.ones(3, 2))",
    "mse_loss": "F.mse_loss(torch.ones(2, 3), torch.ones(3, 2))",
    "masked_fill": "torch.masked_fill(torch.ones(2, 3), torch.ones(3, 2, dtype=torch.bool), 1.)",
    "where": "torch.where(torch.ones(2, 3, dtype=torch.bool), torch.ones(3, 2), 1.)",
    "cosine_similarity": "F.cosine_similarity(torch.ones(2, 3), torch.ones(3, 2))",
    "ok": "torch.ones(2, 1, 3) + torch.ones(4, 1)",
}


def test_broadcast_error_names_upstreams_dimension():
    assert_agree(BROADCAST)



DIAGFLAT = {
    "vector": "torch.diagflat(torch.tensor([1., 2., 3.]))",
    "matrix_offset": "torch.diagflat(torch.arange(4.).reshape(2, 2), 1)",
    "below": "torch.diagflat(torch.tensor([1, 2]), -2)",
    "transposed": "torch.arange(6.).reshape(2, 3).t().diagflat()",
    "scalar": "torch.tensor(5.).diagflat()",
    "meta": "torch.diagflat(torch.empty(2, 3, device='meta'), -1)",
    "grad": "torch.autograd.grad(torch.diagflat(W, 1).mul(torch.arange(25.).reshape(5, 5)).sum(), W)",
}


def test_diagflat():
    assert_agree(DIAGFLAT, setup="W = torch.arange(4.).reshape(2, 2).requires_grad_()\n")


META_COMPOSITES = {
    # composites reach their operators through the door, so meta tensors get shapes; a value
    # check (LAPACK info) runs only where the tensor has values
    "inv": "torch.linalg.inv(M(3, 3))",
    "inverse": "torch.inverse(M(2, 4, 4))",
    "solve": "torch.linalg.solve(M(2, 3, 3), M(2, 3))",
    "cholesky": "torch.linalg.cholesky(M(3, 3))",
    "lu_factor": "torch.linalg.lu_factor(M(3, 3))",
    "ldl_factor": "torch.linalg.ldl_factor(M(3, 3))",
    "max_pool1d": "F.max_pool1d(M(1, 2, 3), 3, 2, ceil_mode=True)",
    "max_pool1d_2d": "F.max_pool1d(M(2, 7), 2)",
    "softmax": "torch.softmax(M(2, 3), 1)",
    "log_softmax_dtype": "F.log_softmax(M(2, 3), 1, dtype=torch.float64)",
    "cross_entropy": "F.cross_entropy(M(3, 5), M(3, dtype=torch.long))",
    "pinv": "torch.linalg.pinv(M(3, 3))",
    "pinv_hermitian": "torch.linalg.pinv(M(3, 3), hermitian=True)",
    "pinv_rcond_tensor": "torch.linalg.pinv(M(3, 3), rcond=M(()))",
    "matrix_rank": "torch.linalg.matrix_rank(M(3, 3))",
    "matrix_rank_tol": "torch.linalg.matrix_rank(M(3, 3), tol=M(()))",
    "matrix_rank_empty": "torch.linalg.matrix_rank(M(2, 0, 3))",
    "svd_no_uv": "torch.svd(M(3, 3), compute_uv=False)",
    "cond_empty": "torch.linalg.cond(M(0, 0))",
    # the same composites with values still check them
    "inv_singular": "torch.linalg.inv(torch.zeros(2, 3, 3))",
    "inv_singular_matrix": "torch.linalg.inv(torch.zeros(3, 3))",
    "cholesky_not_pd": "torch.linalg.cholesky(-torch.eye(2))",
    "pinv_values": "torch.linalg.pinv(torch.eye(3) * 2)",
    "matrix_rank_values": "torch.linalg.matrix_rank(torch.diag(torch.tensor([1., 2., 0.])))",
    "max_pool1d_values": "F.max_pool1d(torch.tensor([[[1., 5., 2., 4.]]]), 3, 2, ceil_mode=True)",
}


def test_composites_serve_meta_tensors():
    assert_agree(META_COMPOSITES,
                 setup="def M(*s, **k):\n    return torch.empty(*s, device='meta', **k)\n")


LINALG_BATCH = {
    # the batch dimensions of A and B broadcast as _linalg_broadcast_batch_dims does: refused
    # with infer_size's message, its operands in upstream's order (B first, but A first for lstsq)
    "solve": "torch.linalg.solve(A, B)",
    "lu_solve": "torch.linalg.lu_solve(*torch.linalg.lu_factor(A), B)",
    "lu_solve_pivots": "torch.linalg.lu_solve(torch.linalg.lu_factor(A)[0], torch.ones(1, 3, dtype=torch.int32), B[:2])",
    "cholesky_solve": "torch.cholesky_solve(B, torch.eye(3).expand(2, 3, 3))",
    "solve_triangular": "torch.linalg.solve_triangular(A.triu(), B, upper=True)",
    "triangular_solve": "torch.triangular_solve(B, A.triu())",
    "lstsq": "torch.linalg.lstsq(A, B).solution",
    "ldl_solve": "torch.linalg.ldl_solve(*torch.linalg.ldl_factor(A @ A.mT + torch.eye(3)), B)",
    "broadcast_ok": "torch.linalg.solve(A[:1] + 3 * torch.eye(3), B).shape",
}


def test_linalg_batches_broadcast_as_upstream():
    assert_agree(LINALG_BATCH, setup="A = torch.arange(18.).reshape(2, 3, 3).sin() + 3 * torch.eye(3)\n"
                                     "B = torch.arange(24.).reshape(4, 3, 2).cos()\n")


AS_STRIDED = {
    # setStrided's checks: the extent inside the storage, no negative stride, a valid offset
    "out_of_bounds": "E.as_strided((2, 2), (30, 1), 1)",
    "last_element": "E.as_strided((2, 2), (4, 1), 6)",
    "one_past": "E.as_strided((2, 2), (4, 1), 7)",
    "empty_anywhere": "E.as_strided((0, 2), (400, 1), 60)",
    "negative_stride": "E.as_strided((2, 2), (-1, 1), 1)",
    "negative_offset": "E.as_strided((2, 2), (1, 1), -1)",
    "negative_size": "E.as_strided((-1, 2), (1, 1), 0)",
    "length_mismatch": "E.as_strided((2, 2), (1,), 0)",
    "of_a_view": "E[2:].as_strided((3, 3), (3, 1))",
    "slice_out_of_bounds": "torch.arange(12.).reshape(3, 4)[:, 1:].as_strided((3,), (4,), 10)",
    "meta_unchecked": "torch.empty(12, device='meta').as_strided((5, 5), (5, 1))",
}


def test_as_strided_stays_inside_its_storage():
    assert_agree(AS_STRIDED, setup="E = torch.arange(12.)\n")


FACTORY_AND_VIEW_ERRORS = {
    # arange_out dispatches ALL_TYPES_AND2(Half, BFloat16) on CPU; meta computes any dtype
    "arange_bool": "torch.arange(3, dtype=torch.bool)",
    "arange_complex": "torch.arange(3, dtype=torch.complex64)",
    "arange_uint16": "torch.arange(0, 3, 1, dtype=torch.uint16)",
    "arange_half": "torch.arange(3, dtype=torch.float16)",
    "arange_meta_complex": "torch.arange(3, dtype=torch.complex64, device='meta')",
    # view(dtype) of another element size names the C++ scalar types
    "view_0d": "torch.tensor(1.5).view(torch.uint8)",
    "view_strided": "torch.ones(2, 2).t().view(torch.uint8)",
    "view_ok": "torch.tensor([1.5]).view(torch.uint8)",
    # mean.dim's float32 shortcut leaves a 0-dim input (dim wraps as for one dim) to the general path
    "mean_0d_keepdim": "torch.mean(torch.tensor(2.5), 0, keepdim=True)",
    "mean_0d_last": "torch.tensor(2.5).mean(-1, True)",
    "mean_1d_keepdim": "torch.arange(4.).mean(0, keepdim=True)",
}


def test_factory_and_view_errors_as_upstream():
    assert_agree(FACTORY_AND_VIEW_ERRORS)
