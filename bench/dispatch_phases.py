"""Where one small operator's time goes on ours: each layer of ``a + b``, ``v.view(32, 16)``,
``v[1]``, ``torch.softmax``, ``transpose`` and ``torch.cat`` called directly, so the differences
between rows are the layers' own costs; and ``torch.from_numpy``'s binding, construction and
tensor object.

Usage: .venv/bin/python bench/dispatch_phases.py [--rounds 15]
Rows (CPU time per call, one thread; each row timed in turn, ``--rounds`` times, the minimum
kept, so a busy machine's slow moments drop out):
  the spelling (``a + b``), the door (``aten_dispatch`` with the schema's arguments), the kernel
  (the registered kernel function), the numpy work and the result tensor's construction.
Upstream has no such layers to time from Python; bench/dispatch_cost.py compares totals.
"""

from __future__ import annotations

import argparse
import time
import timeit


def rows():
    import numpy as np

    import torch
    from torchnative.csrc.core.construct import from_result, tensor_from_numpy
    from torchnative.csrc.core.tensor import make
    from torchnative.csrc.dispatch import door
    from torchnative.csrc.dispatch.call import op
    from torchnative.csrc.kernels.views import view_of
    from torchnative.csrc.ops.kernel_registry import KERNELS, ensure_loaded

    ensure_loaded()
    a, b = torch.rand(16, 16), torch.rand(16, 16)
    v = torch.rand(4, 8, 16)
    add, view, select = op("add.Tensor"), op("view"), op("select.int")
    kadd, kview, kselect = KERNELS["add.Tensor"], KERNELS["view"], KERNELS["select.int"]
    na, nb, f32, size = a._np, b._np, a.dtype, [32, 16]
    flat, row = v._np.reshape((32, 16)), v._np[1]
    arr = np.random.default_rng(0).standard_normal((1, 1, 576)).astype(np.float32)
    st = torch.from_numpy(arr).untyped_storage()
    from torchnative.csrc.kernels.nn_softmax import softmax_array, softmax_int_fast

    s = torch.rand(12, 1, 64)
    h1, h2 = torch.rand(1, 9, 1, 32), torch.rand(1, 9, 1, 32)
    softmax, transpose, cat = op("softmax.int"), op("transpose.int"), op("cat")
    # (softmax.int is a composite: the door's plain lane calls its fast kernel)
    ksoftmax, ktranspose, kcat = softmax_int_fast, KERNELS["transpose.int"], KERNELS["cat"]
    sx, halves = s._np, (h1._np, h2._np)
    return {
        "add: a + b": lambda: a + b,
        "add: door": lambda: door.aten_dispatch(add, (a, b), {}),
        "add: kernel": lambda: kadd(a, b),
        "add: np.add + from_result": lambda: from_result(np.add(na, nb), f32),
        "add: np.add": lambda: np.add(na, nb),
        "view: v.view(32, 16)": lambda: v.view(32, 16),
        "view: door": lambda: door.aten_dispatch(view, (v, size), {}),
        "view: kernel": lambda: kview(v, size),
        "view: view_of (the view tensor)": lambda: view_of(v, (32, 16), (16, 1), 0, np_view=flat),
        "view: make": lambda: make(v._storage, f32, (32, 16), (16, 1), 0, None,
                                   version_ref=v._version_ref, view_base=v, np_view=flat),
        "view: ndarray.reshape": lambda: v._np.reshape((32, 16)),
        "index: v[1]": lambda: v[1],
        "index: door": lambda: door.aten_dispatch(select, (v, 0, 1), {}),
        "index: kernel": lambda: kselect(v, 0, 1),
        "index: view_of (the view tensor)": lambda: view_of(v, (8, 16), (16, 1), 128,
                                                            np_view=row),
        "softmax: torch.softmax(s, dim=-1)": lambda: torch.softmax(s, dim=-1),
        "softmax: door": lambda: door.aten_dispatch(softmax, (s, -1, None), {}),
        "softmax: kernel": lambda: ksoftmax(s, -1, None),
        "softmax: softmax_array (numpy)": lambda: softmax_array(sx, 2),
        "transpose: v.transpose(0, 1)": lambda: v.transpose(0, 1),
        "transpose: door": lambda: door.aten_dispatch(transpose, (v, 0, 1), {}),
        "transpose: kernel": lambda: ktranspose(v, 0, 1),
        "cat: torch.cat((h1, h2), dim=-1)": lambda: torch.cat((h1, h2), dim=-1),
        "cat: door": lambda: door.aten_dispatch(cat, ((h1, h2), -1), {}),
        "cat: kernel": lambda: kcat((h1, h2), -1),
        "cat: np.concatenate": lambda: np.concatenate(halves, -1),
        "from_numpy: torch.from_numpy": lambda: torch.from_numpy(arr),
        "from_numpy: tensor_from_numpy": lambda: tensor_from_numpy(arr),
        "from_numpy: make": lambda: make(st, f32, (1, 1, 576), (576, 576, 1), 0, None,
                                         np_view=arr),
    }


def main() -> None:
    import os

    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    torch.set_num_threads(1)
    cases = rows()
    best = {k: float("inf") for k in cases}
    for _ in range(args.rounds):
        for name, fn in cases.items():
            t = min(timeit.repeat(fn, number=1000, repeat=3, timer=time.process_time)) / 1000
            best[name] = min(best[name], t * 1e6)
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    for name, us in best.items():
        print(f"{name:36s} {us:7.2f} us")
    for op, total in (("add", "add: a + b"), ("view", "view: v.view(32, 16)"),
                      ("index", "index: v[1]"), ("softmax", "softmax: torch.softmax(s, dim=-1)"),
                      ("transpose", "transpose: v.transpose(0, 1)"),
                      ("cat", "cat: torch.cat((h1, h2), dim=-1)")):
        print(f"{op}: binding {best[total] - best[op + ': door']:.2f} us, door "
              f"{best[op + ': door'] - best[op + ': kernel']:.2f} us, kernel "
              f"{best[op + ': kernel']:.2f} us")


if __name__ == "__main__":
    main()
