"""Programs for the dtypes we store as bit patterns (float8, complex32), run on each torch.

``conversions`` writes, for every source -> target cast it makes, the result's raw bytes to an
.npz (inputs come from an .npz the test wrote, so both sides convert the same values); a test
compares them byte for byte. ``outcomes`` runs a list of operators on a small tensor of each
dtype and records the result (bytes, values) or the exception (type, first line of message).
"""

from __future__ import annotations

import numpy as np

from torchnative.testing import upstream

CONVERSIONS = r"""
import json, warnings
import numpy as np, torch
warnings.simplefilter("ignore")
NAMES, INPUTS, OUTPUT, TARGETS = ARGS
d = np.load(INPUTS)
res = {}

def raw(t):
    t = t.contiguous().reshape(-1)
    return t.view(torch.uint8).numpy().copy() if t.dtype is not torch.bool else t.numpy().copy()

def source(k):  # "as_<dtype>": bit patterns numpy cannot hold, viewed as that dtype
    t = torch.from_numpy(d[k])
    return t.view(getattr(torch, k[3:])) if k.startswith("as_") else t

sources = {k: source(k) for k in d.files if not k.startswith("bits_")}
for n in NAMES:
    dt = getattr(torch, n)
    for k, x in sources.items():
        res[f"{k}->{n}"] = raw(x.to(dt))
    pats = torch.from_numpy(d["bits_" + n]).view(dt)  # every (or a sweep of) bit pattern(s)
    for tgt in TARGETS:
        res[f"{n}->{tgt}"] = raw(pats.to(getattr(torch, tgt)))
np.savez(OUTPUT, **res)
print(json.dumps(sorted(res)))
"""


def float32_edges(seed: int, count: int = 40000) -> np.ndarray:
    """NaNs with payloads (signalling and quiet, both signs), infinities, the smallest
    subnormal and normal, and ``count`` random float32 bit patterns."""
    specials = np.array([0x7F800001, 0xFF800001, 0x7FC00000, 0xFFC00000, 0x7FFFFFFF, 0x7F802000,
                         0x7F800000, 0xFF800000, 0x00000001, 0x80000001, 0x80000000, 0x00800000],
                        dtype=np.uint32).view(np.float32)
    rng = np.random.default_rng(seed)
    random = rng.integers(0, 2 ** 32, count, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([specials, random])


def _program(template: str, args) -> str:
    return "ARGS = " + repr(args) + "\n" + template


def run_conversions(tmp_path, names, inputs: dict, targets) -> tuple[dict, dict]:
    """(ours, upstream): {cast: result bytes} for every source in ``inputs`` to each of ``names``
    and from each ``names`` pattern array (``inputs['bits_<name>']``) to every target."""
    src = tmp_path / "inputs.npz"
    np.savez(src, **inputs)
    out = {}
    for side in ("ours", "upstream"):
        path = tmp_path / f"{side}.npz"
        code = _program(CONVERSIONS, (list(names), str(src), str(path), list(targets)))
        (upstream.run_json_ours if side == "ours" else upstream.run_json)(code, 900)
        with np.load(path) as z:
            out[side] = {k: z[k] for k in z.files}
    return out["ours"], out["upstream"]


def byte_mismatches(ours: dict, theirs: dict) -> dict:
    """{cast: number of differing bytes (or a note)} for every cast that differs."""
    bad = {}
    for k, v in theirs.items():
        o = ours.get(k)
        if o is None:
            bad[k] = "missing on ours"
        elif o.shape != v.shape:
            bad[k] = f"shape {o.shape} vs {v.shape}"
        elif not np.array_equal(o, v):
            bad[k] = int((o != v).sum())
    for k in set(ours) - set(theirs):
        bad[k] = "missing on upstream"
    return bad


OUTCOMES = r"""
import io, json, warnings
import torch
warnings.simplefilter("ignore")
NAMES, OPS = ARGS

def enc(v):
    if isinstance(v, torch.Tensor):
        flat = v.detach().contiguous().reshape(-1)
        bits = flat.view(torch.uint8).tolist() if flat.dtype is not torch.bool else flat.tolist()
        return ["T", str(v.dtype), list(v.shape), bits]
    if isinstance(v, (tuple, list)) and not isinstance(v, torch.Size):
        return [enc(e) for e in v]
    return repr(v)

out = {}
for n in NAMES:
    dt = getattr(torch, n)
    cplx = dt.is_complex
    base = torch.tensor([1.5 + 1j, -2.0, 0.25j, 3.0 - 0.5j]) if cplx else torch.tensor([1.5, -2.0, 0.25, 3.0])
    x = base.to(dt)
    mask = torch.tensor([True, False, True, False])
    for name, src in OPS:
        try:
            r = ["ok", enc(eval(src))]
        except Exception as e:
            r = ["err", type(e).__name__, str(e).split("\n")[0]]
        out[n + " " + name] = r
print(json.dumps(out))
"""

# (name, expression over x, dt, mask, torch): what upstream computes or refuses on these dtypes.
OPS = [
    ("add", "x + x"), ("add_scalar", "x + 1"), ("sub", "x - x"), ("mul", "x * x"),
    ("mul_scalar", "x * 2"), ("div", "x / x"), ("neg", "-x"), ("abs", "x.abs()"),
    ("eq", "x == x"), ("ne", "x != x"), ("lt", "x < x"), ("sum", "x.sum()"), ("mean", "x.mean()"),
    ("max", "x.max()"), ("min", "x.min()"), ("clone", "x.clone()"), ("cat", "torch.cat([x, x])"),
    ("cat_mixed", "torch.cat([x, torch.ones(1)])"), ("stack", "torch.stack([x, x])"),
    ("index", "x[[0, 2]]"), ("masked_select", "x[mask]"), ("index_select", "x.index_select(0, torch.tensor([1]))"),
    ("fill", "x.clone().fill_(2.0)"), ("fill_big", "x.clone().fill_(1e10)"),
    ("zeros_like", "torch.zeros_like(x)"), ("ones_like", "torch.ones_like(x)"),
    ("full", "torch.full((2,), 3.0, dtype=dt)"), ("ones", "torch.ones(2, dtype=dt)"),
    ("eye", "torch.eye(2, dtype=dt)"), ("tensor", "torch.tensor([1.5, 2], dtype=dt)"),
    ("where", "torch.where(mask, x, torch.zeros_like(x))"), ("flip", "x.flip(0)"),
    ("sort", "x.sort()"), ("topk", "x.topk(1)"), ("equal", "torch.equal(x, x)"),
    ("tolist", "x.tolist()"), ("item", "x[1].item()"), ("repr", "repr(x)"), ("str2d", "str(x.reshape(2, 2))"),
    ("view_u8", "x.view(torch.uint8)"), ("view_i16_odd", "x[:3].view(torch.int16 if dt.itemsize == 1 else torch.int64)"),
    ("view_same", "x.view(torch.int8 if dt.itemsize == 1 else torch.int32)"),
    ("isnan", "x.isnan()"), ("isinf", "x.isinf()"), ("isfinite", "x.isfinite()"), ("sign", "x.sign()"),
    ("sgn", "x.sgn()"), ("relu", "torch.relu(x)"), ("clamp", "x.clamp(0, 1)"), ("exp", "x.exp()"),
    ("mm", "x.reshape(1, 4) @ x.reshape(4, 1)"), ("nonzero", "x.nonzero()"),
    ("copy_", "torch.empty_like(x).copy_(x)"), ("copy_from_f32", "torch.empty_like(x).copy_(torch.tensor([0.1, 1e5, -7.3, 1e-9]))"),
    ("cumsum", "x.cumsum(0)"), ("any", "x.any()"), ("all", "x.all()"), ("argmax", "x.argmax()"),
    ("gather", "x.gather(0, torch.tensor([1]))"), ("masked_fill", "x.masked_fill(mask, 1.0)"),
    ("setitem", "(lambda y: (y.__setitem__(0, 5.0), y)[1])(x.clone())"),
    ("setitem_t", "(lambda y: (y.__setitem__(mask, torch.tensor(0.5)), y)[1])(x.clone())"),
    ("index_put", "x.clone().index_put_((torch.tensor([0]),), torch.tensor([1.0]).to(dt))"),
    ("contiguous", "x.reshape(2, 2).t().contiguous()"), ("transpose", "x.reshape(2, 2).t()"),
    ("conj", "x.conj().resolve_conj()"), ("is_conj", "x.conj().is_conj()"), ("real", "x.real"),
    ("imag", "x.imag"), ("view_as_real", "torch.view_as_real(x)"), ("angle", "x.angle()"),
    ("pow", "x ** 2"), ("sigmoid", "x.sigmoid()"), ("roll", "x.roll(1)"), ("repeat", "x.repeat(2)"),
    ("narrow_copy", "x.narrow_copy(0, 0, 2)"), ("maximum", "torch.maximum(x, x)"),
    ("zero_", "x.clone().zero_()"), ("tril", "x.reshape(2, 2).tril()"), ("diag", "x.diag()"),
    ("arange", "torch.arange(3, dtype=dt)"), ("linspace", "torch.linspace(0, 1, 3, dtype=dt)"),
    ("randn_shape", "torch.randn(2, dtype=dt).shape"), ("bmm", "torch.bmm(x.reshape(1, 1, 4), x.reshape(1, 4, 1))"),
    ("dot", "torch.dot(x, x)"), ("pad", "torch.nn.functional.pad(x, (1, 1))"),
    ("expand_clone", "x[:1].expand(3).clone()"), ("scatter", "x.scatter(0, torch.tensor([0]), x)"),
    ("allclose", "torch.allclose(x, x)"), ("isclose", "torch.isclose(x, x)"), ("chalf", "x.chalf()"),
    ("to_f32", "x.float()"), ("to_c64", "x.to(torch.complex64)"), ("to_bool", "x.bool()"),
    ("split", "x.split(1)"), ("unbind", "x.unbind()"), ("numpy", "x.numpy()"), ("is_pinned", "x.is_pinned()"),
    ("element_size", "x.element_size()"), ("nbytes", "x.untyped_storage().nbytes()"),
    ("save", "(lambda b: (torch.save({'x': x, 'v': x[1:3]}, b), __import__('hashlib').sha256(b.getvalue()).hexdigest())[1])(io.BytesIO())"),
    ("load", "(lambda b: (torch.save({'v': x[1:3]}, b), b.seek(0), torch.load(b)['v'])[2])(io.BytesIO())"),
    ("safetensors", "__import__('hashlib').sha256(__import__('safetensors.torch').torch.save({'x': x})).hexdigest()"),
    ("safetensors_load", "__import__('safetensors.torch').torch.load(__import__('safetensors.torch').torch.save({'x': x}))['x']"),
    ("dlpack", "torch.from_dlpack(x)"),
    # our storage layout is not an input type: a structured array is numpy.void to torch
    ("from_numpy_layout", "torch.from_numpy(__import__('numpy').zeros(2, [(n, 'u1')] if dt.itemsize == 1 else [('real', '<f2'), ('imag', '<f2')]))"),
    ("as_tensor_layout", "torch.as_tensor(__import__('numpy').zeros(2, [(n, 'u1')] if dt.itemsize == 1 else [('real', '<f2'), ('imag', '<f2')]))"),
]


def run_outcomes(names) -> tuple[dict, dict]:
    """(ours, upstream): {"<dtype> <op>": outcome} for every operator in OPS."""
    code = _program(OUTCOMES, (list(names), OPS))
    return upstream.run_both(code, 900)


def outcome_mismatches(ours: dict, theirs: dict, refusal: str = "TorchnativeNotImplementedError"):
    """(differing, refused): cases whose outcome differs from upstream's, except those where ours
    refuses by name (``refused``, listed separately)."""
    differ, refused = {}, {}
    for k, v in theirs.items():
        o = ours.get(k)
        if o == v:
            continue
        if o and o[0] == "err" and o[1] == refusal:
            refused[k] = o[2]
        else:
            differ[k] = (v, o)
    return differ, refused

