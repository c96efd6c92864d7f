"""The small operators' inline cases equal the general steps they skip, field by field and byte
by byte: view_of's inline tensor against make + note_view, add/sub/mul's float pair against
dtype2 + apply2, softmax.int's dense case against _softmax, and the spellings' sequence keys
against key_of."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from torchnative.csrc.kernels import nn_softmax, pointwise_binary, views
from torchnative.csrc.python.call_cache import key_of

_SLOTS = ("_st", "_dtype", "_size", "_stride", "_offset", "_version_ref", "_requires_grad",
          "_grad", "_grad_fn", "_view_base", "_retains_grad", "_output_nr", "_wrapped",
          "_tn_inference")


def _fields(t):
    out = {k: getattr(t, k) for k in _SLOTS}
    out["_tn_view"] = list(t._tn_view or [])
    out["__dict__ keys"] = list(t.__dict__)
    out["_math_bits"] = t._math_bits
    out["class"] = type(t)
    return out


def _bases():
    leaf = torch.rand(4, 6, requires_grad=True)
    with torch.no_grad():
        nog = leaf[1:]  # a no-grad view of a leaf that requires grad
    with torch.inference_mode():
        inf = torch.rand(4, 6)
    return {"plain": torch.rand(4, 6), "leaf": leaf, "nonleaf": leaf * 2, "no-grad view": nog,
            "view of view": torch.rand(4, 6)[1:], "inference": inf,
            "conj": torch.rand(4, 6, dtype=torch.complex64).conj(),
            "neg": torch.rand(4, 6, dtype=torch.complex64).conj().imag}


@pytest.mark.parametrize("mode", ["grad", "no_grad", "inference"])
@pytest.mark.parametrize("name", list(_bases()))
@pytest.mark.parametrize("multi", [False, True])
def test_view_of_inline_equals_make_and_note_view(mode, name, multi):
    ctx = {"grad": torch.enable_grad, "no_grad": torch.no_grad,
           "inference": torch.inference_mode}[mode]
    base = _bases()[name]
    size, stride, off = base._size[1:], base._stride[1:], base._offset + base._stride[0]
    with ctx():
        general = views.view_of(base, size, stride, off, multi_output=multi)  # np_view None
        inline = views.view_of(base, size, stride, off, np_view=general._np,
                               multi_output=multi)
    assert _fields(inline) == _fields(general)
    assert torch.is_inference(inline) == torch.is_inference(general)


def _operands():
    g = np.random.default_rng(0)
    a = g.standard_normal((6, 8)).astype(np.float32)
    a[0, :3] = [np.inf, np.nan, 3e38]
    b = g.standard_normal((6, 8)).astype(np.float32)
    b[0, :3] = [-np.inf, 1.0, 3e38]
    x, y = torch.from_numpy(a), torch.from_numpy(b)
    return {
        "dense": (x, y), "float64": (x.double(), y.double()), "transposed": (x.t(), y.t()),
        "one transposed": (x.t().contiguous(), y.t()), "broadcast row": (x, y[:1]),
        "0-dim": (x, y[0, 0]), "0-dim first": (y[0, 0], x), "0-dim pair": (x[0, 0], y[0, 1]),
        "wrapped number": (x, 2.5),
        "mixed dtypes": (x, y.double()), "half": (x.half(), y.half()),
        "ints": (x.int(), y.int()), "empty": (x[:0], y[:0]), "mismatched": (x, y[:, :3]),
        "scalar first": (2.5, x), "complex": (x.to(torch.complex64), y.to(torch.complex64)),
    }


def _outcome(fn, *args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # numpy's overflow warning must stay quiet
            r = fn(*args)
    except Exception as e:  # noqa: BLE001 - the error is the outcome
        return type(e).__name__, str(e)
    # the array's type too: a 0-d result held as a numpy scalar cannot be written in place
    return r._dtype, r._size, r._stride, type(r._np), r._np.tobytes(), r._np.strides


@pytest.mark.parametrize("name", list(_operands()))
@pytest.mark.parametrize("kernel", ["add", "sub", "mul"])
def test_float_pair_equals_apply2(monkeypatch, name, kernel):
    a, b = _operands()[name]
    fn = getattr(pointwise_binary, kernel)
    lane = _outcome(fn, a, b)
    monkeypatch.setattr(pointwise_binary, "_float_pair", lambda fn, a, b: None)
    assert lane == _outcome(fn, a, b)


def test_float_pair_is_taken_and_seen_to_differ_when_broken(monkeypatch):
    # control: the lane is where float pairs go (a lane computing something else is caught)
    x, y = _operands()["dense"]
    monkeypatch.setattr(pointwise_binary, "_float_pair",
                        lambda fn, a, b: pointwise_binary.apply2(np.maximum, a, b, a._dtype))
    assert _outcome(pointwise_binary.add, x, y) != _outcome(
        pointwise_binary.apply2, np.add, x, y, x._dtype)


def _softmax_inputs():
    g = torch.Generator().manual_seed(0)
    s = torch.randn(12, 1, 64, generator=g) * 30
    s[0, 0, :] = -float("inf")
    s[1, 0, 5] = float("nan")
    s[2, 0, 7] = float("inf")
    return {"decode": s, "float64": s.double(), "transposed": s.transpose(0, 2),
            "0-d": torch.tensor(1.5), "1-d": s[3, 0], "empty": torch.empty(3, 0),
            "bfloat16": s.bfloat16(), "wide": torch.randn(3, 5000, generator=g)}


@pytest.mark.parametrize("name", list(_softmax_inputs()))
@pytest.mark.parametrize("dim", [-4, -3, -1, 0, 1, 2, 3])
def test_softmax_dense_case_equals_softmax_kernel(name, dim):
    x = _softmax_inputs()[name]
    assert _outcome(nn_softmax.softmax_int_fast, x, dim) == \
        _outcome(nn_softmax._softmax, x, dim, False)


def _spelling(fn):
    return next(c.cell_contents for c in fn.__closure__ if hasattr(c.cell_contents, "recipes"))


@pytest.mark.parametrize("spelling, self_arg, args, kwargs", [
    ("cat", False, "pair", {"dim": -1}), ("cat", False, "list pair, 0", {}),
    ("stack", False, "pair", {}), ("sum", False, "t, (0, 1)", {}), ("view", True, "[3, 8]", {}),
    ("permute", True, "(1, 0)", {}), ("sum", True, "", {"dim": [0]}),
])
def test_recipes_are_found_under_key_of(spelling, self_arg, args, kwargs):
    t, u = torch.rand(4, 6), torch.rand(4, 6)
    args = {"pair": ((t, u),), "list pair, 0": ([t, u], 0), "t, (0, 1)": (t, (0, 1)),
            "[3, 8]": ([3, 8],), "(1, 0)": ((1, 0),), "": ()}[args]
    fn = getattr(torch.Tensor if self_arg else torch, spelling)
    first = fn(t, *args, **kwargs) if self_arg else fn(*args, **kwargs)
    again = fn(t, *args, **kwargs) if self_arg else fn(*args, **kwargs)
    assert torch.equal(first, again)
    recipe = _spelling(fn).recipes.get(key_of(t if self_arg else None, args, kwargs))
    assert recipe and recipe.run is not None


def test_sequence_key_matches_key_of_directly():
    t, u = torch.rand(2), torch.rand(2)
    from torchnative.csrc.python.call_cache import _type_key

    for args, kwargs in [(((t, u),), {"dim": 0}), (([t, u], 0), {}), (((t, u),), {}),
                         ((t, (0, 1)), {"keepdim": True}), ((t,), {"dim": (0,)}),
                         ((torch.fx.immutable_collections.immutable_list([t, u]),), {})]:
        key = tuple(map(_type_key, args))
        if kwargs:
            from torchnative.csrc.python.spellings import _with_keywords

            key = _with_keywords(key, kwargs) or key_of(None, args, kwargs)
        assert key == key_of(None, args, kwargs)
        mkey = (_type_key(t), *map(_type_key, args))
        if kwargs:
            mkey = _with_keywords(mkey, kwargs) or key_of(t, args, kwargs)
        assert mkey == key_of(t, args, kwargs)
