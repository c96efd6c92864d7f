"""Our side of the ModuleInfo replay: each case generate.py wrote, rebuilt and run exactly as
upstream ran it (same constructor arguments, state, inputs, seeds), judged output by output and
gradient by gradient with the harness's element-wise criterion against upstream's float32 results
and its float64 rerun.

    python replay.py CASES.pt [NAME ...]
    prints one JSON object: case name -> null or the first problem; the named cases have one
    output element perturbed (the comparison's control)
"""

from __future__ import annotations

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


def _judge(ours, low, high, what: str, summed: bool):
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
        problem = compare.elementwise(_np(o), _np(u), _np(h), str(u.dtype).split(".")[-1], summed)
        if problem:
            return f"{what}[{i}]: {problem}"
    return None


def replay(case, perturb: bool = False) -> str | None:
    outs, grads = _run(case["module"], case["cargs"], case["ckwargs"], case["state"],
                       case["fargs"], case["fkwargs"], case["training"], torch.float32)
    if perturb:  # the control: one output element moved by a thousandth must be caught
        first = next(o for o in outs if o.is_floating_point() and o.numel())
        first.view(-1)[0] *= 1.001
    # module outputs and parameter gradients are sums whose terms cancel (matmuls, convolutions,
    # normalisations), so each is judged with upstream's own largest float32 error as its spread
    return (_judge(outs, case["out32"], case["out64"], "output", True)
            or _judge(grads, case["grads32"], case["grads64"], "grad", True))


def main():
    warnings.simplefilter("ignore")
    data = torch.load(sys.argv[1], weights_only=False)
    perturbed = set(sys.argv[2:])
    results = {}
    for case in data["cases"]:
        try:
            results[case["name"]] = replay(case, case["name"] in perturbed)
        except Exception as e:
            results[case["name"]] = f"raised {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    print(json.dumps(results))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
