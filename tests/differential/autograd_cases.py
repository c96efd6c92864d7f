"""Gradient cases run identically on upstream torch and on ours (each in its own process).

``python autograd_cases.py OUT.npz DTYPE [NAMES...]`` computes, for every case, the gradients of
``sum(f(inputs) * cotangent)`` with respect to the inputs that require grad, plus the output's
grad_fn name, and writes them to OUT.npz. Inputs and cotangents come from numpy generators seeded
by the case name, so both sides see the same numbers. Only torch's public API is used.
"""

from __future__ import annotations

import json
import sys
import zlib

import numpy as np

# name -> (input specs, expression over x0, x1, ...). Specs: "f:shape" float requiring grad,
# "p:shape" positive float requiring grad, "c:shape" float constant, "i<N:shape" int64 in [0, N),
# "b:shape" bool mask.
CASES = {
    "add": (["f:3,4", "f:4"], "x0 + x1 * 2"),
    "sub_alpha": (["f:3,4", "f:3,1"], "torch.sub(x0, x1, alpha=3)"),
    "mul": (["f:2,3", "f:2,3"], "x0 * x1"),
    "div": (["f:3,4", "p:3,4"], "x0 / (x1 + 0.5)"),
    "neg": (["f:5"], "-x0"),
    "pow_scalar": (["p:4,3"], "x0 ** 3"),
    "pow_tensor": (["p:4,3", "f:4,3"], "torch.pow(x0 + 0.5, x1)"),
    "exp_log": (["p:6"], "torch.log(x0 + 1).exp()"),
    "tanh": (["f:3,5"], "torch.tanh(x0)"),
    "sigmoid": (["f:3,5"], "torch.sigmoid(x0)"),
    "relu": (["f:4,5"], "torch.relu(x0)"),
    "gelu": (["f:4,5"], "F.gelu(x0)"),
    "gelu_tanh": (["f:4,5"], "F.gelu(x0, approximate='tanh')"),
    "silu": (["f:4,5"], "F.silu(x0)"),
    "rsqrt_sqrt": (["p:4,5"], "torch.rsqrt(x0 + 0.1) + torch.sqrt(x0 + 0.1)"),
    "mean_sum": (["f:3,4,5"], "x0.mean(dim=1) + x0.sum(dim=(0, 1)) + x0.sum()"),
    "mean_keepdim": (["f:3,4"], "x0.mean(-1, keepdim=True) * x0"),
    "amax": (["f:4,6"], "x0.amax(dim=1)"),
    "softmax": (["f:3,7"], "torch.softmax(x0, -1)"),
    "log_softmax": (["f:3,7"], "torch.log_softmax(x0, 1)"),
    "layer_norm": (["f:2,3,8", "f:8", "f:8"], "F.layer_norm(x0, (8,), x1, x2)"),
    "rms_norm": (["f:2,3,8", "f:8"], "F.rms_norm(x0, (8,), x1, eps=1e-6)"),
    "embedding": (["i10:2,5", "f:10,4"], "F.embedding(x0, x1)"),
    "mm": (["f:3,4", "f:4,5"], "x0 @ x1"),
    "bmm": (["f:2,3,4", "f:2,4,5"], "torch.bmm(x0, x1)"),
    "addmm": (["f:5", "f:3,4", "f:4,5"], "torch.addmm(x0, x1, x2, beta=0.5, alpha=2)"),
    "matmul_bcast": (["f:2,3,4", "f:4,5"], "torch.matmul(x0, x1)"),
    "linear": (["f:2,3,4", "f:5,4", "f:5"], "F.linear(x0, x1, x2)"),
    "views": (["f:2,3,4"], "x0.view(6, 4).t().reshape(2, 12).transpose(0, 1).permute(1, 0)"
              ".unsqueeze(0).squeeze(0).expand(3, 2, 12) * 1.5"),
    "select_slice": (["f:4,5"], "x0[1] * 2 + x0[2:4].sum(0) + x0[:, 1:5:2].sum()"),
    "cat_stack": (["f:2,3", "f:4,3"], "torch.cat([x0, x1], 0) * torch.stack([x1[:2], x0], 0).sum(0)"
                  ".repeat(3, 1)"),
    "index": (["f:5,4", "i5:3"], "x0[x1] * 2"),
    "gather": (["f:3,5", "i5:3,2"], "torch.gather(x0, 1, x1)"),
    "where": (["f:3,4", "f:3,4", "b:3,4"], "torch.where(x2, x0, x1 * 2)"),
    "masked_fill": (["f:3,4", "b:3,4"], "x0.masked_fill(x1, 0.5)"),
    "clamp": (["f:4,5"], "x0.clamp(-0.5, 0.7) + x0.clamp(min=0.1)"),
    "nll_loss": (["f:4,5", "i5:4"], "F.nll_loss(F.log_softmax(x0, 1), x1)"),
    "cross_entropy": (["f:4,5", "i5:4"], "F.cross_entropy(x0, x1)"),
    "cross_entropy_smooth": (["f:4,5", "i5:4"], "F.cross_entropy(x0, x1, label_smoothing=0.1)"),
    "mse": (["f:4,5", "c:4,5"], "F.mse_loss(x0, x1)"),
    "conv2d": (["f:2,3,6,6", "f:4,3,3,3", "f:4"], "F.conv2d(x0, x1, x2, padding=1)"),
    "conv2d_stride": (["f:1,2,7,7", "f:3,2,3,3"], "F.conv2d(x0, x1, stride=2)"),
    "batch_norm": (["f:4,3,5,5", "f:3", "f:3"],
                   "F.batch_norm(x0, torch.zeros(3, dtype=x0.dtype), torch.ones(3, dtype=x0.dtype), x1, x2, training=True)"),
    "group_norm": (["f:2,4,3,3", "f:4", "f:4"], "F.group_norm(x0, 2, x1, x2)"),
    "max_pool2d": (["f:2,3,6,6"], "F.max_pool2d(x0, 2)"),
    "avg_pool2d": (["f:2,3,6,6"], "F.avg_pool2d(x0, 2)"),
    "avg_pool2d_ceil": (["f:2,3,7,6"], "F.avg_pool2d(x0, 3, 2, 1, ceil_mode=True, "
                        "count_include_pad=False)"),
    "sdpa": (["f:1,2,4,8", "f:1,2,4,8", "f:1,2,4,8"],
             "F.scaled_dot_product_attention(x0, x1, x2)"),
    "sdpa_causal": (["f:1,2,4,8", "f:1,2,4,8", "f:1,2,4,8"],
                    "F.scaled_dot_product_attention(x0, x1, x2, is_causal=True)"),
    "inplace_view": (["f:3,4"], "_inplace_view(x0)"),
}


def _inplace_view(x):
    y = x * 1
    y[1] = y[1] * 3
    y[:, 0].mul_(2)
    return y.sigmoid()


def _inputs(torch, name, dtype):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    out = []
    for spec in CASES[name][0]:
        kind, shape = spec.split(":")
        shape = tuple(int(s) for s in shape.split(","))
        if kind in ("f", "c"):
            a = rng.standard_normal(shape)
        elif kind == "p":
            a = rng.random(shape) + 0.5
        elif kind == "b":
            out.append(torch.from_numpy(rng.random(shape) > 0.5))
            continue
        else:
            out.append(torch.from_numpy(rng.integers(0, int(kind[1:]), shape)))
            continue
        t = torch.from_numpy(a).to(dtype)
        out.append(t.requires_grad_(kind in ("f", "p")))
    return out


def run_case(torch, name, dtype):
    import torch.nn.functional as F

    xs = _inputs(torch, name, dtype)
    env = {"torch": torch, "F": F, "_inplace_view": _inplace_view}
    env.update({f"x{i}": x for i, x in enumerate(xs)})
    out = eval(CASES[name][1], env)
    rng = np.random.default_rng(zlib.crc32(name.encode()) + 1)
    cot = torch.from_numpy(rng.standard_normal(tuple(out.shape))).to(out.dtype)
    wrt = [x for x in xs if x.requires_grad]
    grads = torch.autograd.grad((out * cot).sum(), wrt)
    node = type(out.grad_fn).__name__ if out.grad_fn is not None else ""
    return out.detach().double().numpy(), [g.double().numpy() for g in grads], node


def main(path, dtype_name, names):
    import torch

    dtype = getattr(torch, dtype_name)
    arrays, meta = {}, {}
    for name in names or CASES:
        try:
            out, grads, node = run_case(torch, name, dtype)
        except Exception as e:  # recorded: the other side must fail too, or the case fails
            meta[name] = {"error": f"{type(e).__name__}: {e}"[:500]}
            continue
        arrays[f"{name}/out"] = out
        for i, g in enumerate(grads):
            arrays[f"{name}/g{i}"] = g
        meta[name] = {"node": node, "n": len(grads)}
    np.savez(path, **arrays)
    with open(path + ".json", "w") as f:
        json.dump(meta, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
