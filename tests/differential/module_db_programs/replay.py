"""Our side of the ModuleInfo replay: each case generate.py wrote, rebuilt and run exactly as
upstream ran it (same constructor arguments, state, inputs, seeds), judged output by output and
gradient by gradient with the harness's element-wise criterion against upstream's float32 results
and its float64 rerun, widened by how far upstream's own float32 results move under this
machine's other CPU profiles (the same cases generated there).

    python replay.py CASES.pt [--others CASES.pt ...] [--perturb NAME ...]
    prints one JSON object: case name -> null or the first problem; the perturbed cases have one
    output element moved (the comparison's control)
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))
from module_case import _run  # noqa: E402  (the one way both sides run a case)

from torchnative.testing.golden import compare  # noqa: E402


def _np(t):
    return None if t is None else t.detach().resolve_conj().numpy()


def _judge(ours, low, high, what: str, summed: bool, others=()):
    if len(ours) != len(low):
        return f"{what}: {len(ours)} tensors, upstream {len(low)}"
    for i, (o, u, h) in enumerate(zip(ours, low, high)):
        if (o is None) != (u is None):
            return f"{what}[{i}]: None on one side"
        if o is None:
            continue
        if o.dtype != u.dtype or tuple(o.shape) != tuple(u.shape):
            return f"{what}[{i}]: {o.dtype}{tuple(o.shape)} vs upstream {u.dtype}{tuple(u.shape)}"
        if not u.is_floating_point():
            if not torch.equal(o, u):
                return f"{what}[{i}]: integer values differ"
            continue
        moved = [_np(other[i]) for other in others
                 if len(other) == len(low) and other[i] is not None and other[i].shape == u.shape]
        problem = compare.elementwise(_np(o), _np(u), _np(h), str(u.dtype).split(".")[-1], summed,
                                      moved)
        if problem:
            return f"{what}[{i}]: {problem}"
    return None


def replay(case, perturb: bool = False, others=()) -> str | None:
    """``others``: the same case as upstream ran it under this machine's other CPU profiles."""
    outs, grads = _run(case["module"], case["cargs"], case["ckwargs"], case["state"],
                       case["fargs"], case["fkwargs"], case["training"], torch.float32)
    if perturb:  # the control: one output element moved by a thousandth must be caught
        first = next(o for o in outs if o.is_floating_point() and o.numel())
        first.view(-1)[0] *= 1.001
    # module outputs and parameter gradients are sums whose terms cancel (matmuls, convolutions,
    # normalisations), so each is judged with upstream's own largest float32 error as its spread
    return (_judge(outs, case["out32"], case["out64"], "output", True,
                   [o["out32"] for o in others])
            or _judge(grads, case["grads32"], case["grads64"], "grad", True,
                      [o["grads32"] for o in others]))


def main():
    warnings.simplefilter("ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--others", nargs="*", default=[])
    ap.add_argument("--perturb", nargs="*", default=[])
    args = ap.parse_args()
    data = torch.load(args.cases, weights_only=False)
    others = [{c["name"]: c for c in torch.load(p, weights_only=False)["cases"]}
              for p in args.others]
    perturbed = set(args.perturb)
    results = {}
    for case in data["cases"]:
        name = case["name"]
        try:
            results[name] = replay(case, name in perturbed,
                                   [o[name] for o in others if name in o])
        except Exception as e:
            results[name] = f"raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    print(json.dumps(results))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
