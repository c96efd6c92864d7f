"""Writes into a bfloat16 weight after its products have run (so our torch holds the widened
float32 copy a product with the weight on the left reads), then the products again: run on both torches, printed as JSON. ``--break`` (ours
only) replaces the cache's freshness check by one that ignores writes and versions, a control
the comparison must catch. Each case also returns the product recomputed from a fresh clone of
the weight (never cached) and, from the same bfloat16 values, in float64."""

import json
import sys

import numpy as np
import torch

torch.set_num_threads(1)
BF = torch.bfloat16
OUT, IN = 96, 256  # 24,576 weight elements: above the cache's size floor


def fresh(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Linear(IN, OUT, bias=False).to(BF)


def other():
    return torch.randn(OUT, IN, generator=torch.Generator().manual_seed(5)).to(BF)


def _set_alias(w):
    alias = torch.empty(0, dtype=BF).set_(w.untyped_storage(), 0, (w.numel(),), (1,))
    alias[:IN].fill_(2.0)


def _numpy_alias(w):
    w.detach().view(torch.int16).numpy()[0, :] = 0x3F80  # bfloat16 1.0


def _dlpack_alias(w):
    from torch.utils import dlpack

    dlpack.from_dlpack(dlpack.to_dlpack(w.detach().view(torch.int16)))[1, :] = 0x4000  # 2.0


def _sgd(lin):
    opt = torch.optim.SGD(lin.parameters(), lr=0.5)
    with torch.enable_grad():
        lin(torch.ones(2, IN, dtype=BF)).float().sum().backward()
    opt.step()


def _adam_foreach(lin):
    opt = torch.optim.Adam(lin.parameters(), lr=0.1, foreach=True)
    with torch.enable_grad():
        lin(torch.ones(2, IN, dtype=BF)).float().sum().backward()
    opt.step()


WRITES = {
    "in-place op": lambda lin: lin.weight.mul_(2),
    "in-place op in inference mode": lambda lin: _in_inference(lambda: lin.weight.add_(1)),
    ".data write": lambda lin: lin.weight.data.add_(1),
    ".data = assignment": lambda lin: setattr(lin.weight, "data", other()),
    "set_": lambda lin: lin.weight.set_(other()),
    "load_state_dict": lambda lin: lin.load_state_dict({"weight": other()}),
    "copy_": lambda lin: lin.weight.copy_(other()),
    "SGD step": _sgd,
    "Adam step (foreach)": _adam_foreach,
    "write through a view": lambda lin: lin.weight[:, :7].fill_(3.0),
    "item write through a flat view": lambda lin: lin.weight.view(-1).__setitem__(11, 5.0),
    "detach() alias": lambda lin: lin.weight.detach().zero_(),
    "second tensor set_ on the storage": lambda lin: _set_alias(lin.weight),
    "UntypedStorage.fill_": lambda lin: lin.weight.untyped_storage().fill_(0),
    "UntypedStorage.copy_": lambda lin: lin.weight.untyped_storage().copy_(
        other().untyped_storage()),
    "numpy alias": lambda lin: _numpy_alias(lin.weight),
    "DLPack alias": lambda lin: _dlpack_alias(lin.weight),
}


def _in_inference(fn):
    with torch.inference_mode():
        fn()


def _products(lin, xs, col):
    # linear reads the weight in place (lowp_product.py); mm with the weight on the left reads
    # its cached float32 copy
    return [lin(x) for x in xs] + [torch.mm(lin.weight, col)]


def run_case(write):
    lin = fresh()
    gen = torch.Generator().manual_seed(1)
    xs = [torch.randn(1, IN, generator=gen).to(BF), torch.randn(2, 3, IN, generator=gen).to(BF)]
    col = torch.randn(IN, 1, generator=gen).to(BF)
    with torch.no_grad():
        for _ in range(3):  # seen twice unchanged: cached from here on
            _products(lin, xs, col)
        if write is not None:
            write(lin)
        after = _products(lin, xs, col)
        w = lin.weight.detach()
        clone = [torch.nn.functional.linear(x, w.clone()) for x in xs] + [torch.mm(w.clone(), col)]
        wide = [x.double() @ w.double().T for x in xs] + [w.double() @ col.double()]
    flat = lambda ts: np.concatenate([t.float().double().numpy().ravel() for t in ts]).tolist()
    return {"after": flat(after), "clone": flat(clone), "float64": flat(wide)}


def numpy_origin_case():
    """A weight over memory numpy owns: written through the array after its products ran."""
    buf = np.zeros((OUT, IN), np.int16)
    buf[...] = 0x3F80
    lin = fresh()
    with torch.no_grad():
        lin.weight = torch.nn.Parameter(torch.from_numpy(buf).view(BF), requires_grad=False)
        x = torch.ones(1, IN, dtype=BF)
        for _ in range(3):
            lin(x)
        buf[:, 0] = 0x4040  # bfloat16 3.0
        after = lin(x)
    return {"after": after.float().double().numpy().ravel().tolist(),
            "clone": torch.nn.functional.linear(x, lin.weight.clone()).float().double().numpy()
            .ravel().tolist(),
            "float64": (x.double() @ lin.weight.double().T).numpy().ravel().tolist()}


def product_cases():
    """linear's shapes through the cached products (bias after addmm or matmul, a strided
    input, a vector input, float16), each run three times; the third is returned."""
    gen = torch.Generator().manual_seed(3)
    r = lambda *shape: torch.randn(*shape, generator=gen)
    out = {}
    for dt in (BF, torch.float16):
        w, b = r(OUT, IN).to(dt), r(OUT).to(dt)
        cases = {
            "3-d input, no bias": (r(2, 4, IN).to(dt), w, None),
            "2-d input, bias (addmm)": (r(5, IN).to(dt), w, b),
            "2-d input, 2-d bias": (r(5, IN).to(dt), w, r(5, OUT).to(dt)),
            "3-d input, bias": (r(2, 4, IN).to(dt), w, b),
            "strided 3-d input, bias (matmul, then add)": (r(4, 2, IN).to(dt).transpose(0, 1),
                                                           w, b),
            "1-d input": (r(IN).to(dt), w, None),
            "one row (gemv)": (r(1, 1, IN).to(dt), w, b),
        }
        for name, (x, w_, b_) in cases.items():
            with torch.no_grad():
                ys = [torch.nn.functional.linear(x, w_, b_) for _ in range(3)]
            wide = x.double() @ w_.double().T + (0 if b_ is None else b_.double())
            key = f"{str(dt).split('.')[1]}: {name}"
            out[key] = {"after": ys[-1].double().numpy().ravel().tolist(),
                        "clone": ys[0].double().numpy().ravel().tolist(),
                        "float64": wide.numpy().ravel().tolist()}
    return out


def main():
    if "--break" in sys.argv:
        from torchnative.csrc.kernels.support import widened_cache

        widened_cache._Entry.fresh = lambda self, storage, t: self.storage() is storage
    out = {"no write": run_case(None)}
    for name, write in WRITES.items():
        out[name] = run_case(write)
    out["numpy-owned memory"] = numpy_origin_case()
    out.update(product_cases())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
