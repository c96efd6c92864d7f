"""Runs one ecosystem program on whichever torch this interpreter has and writes its results.

    python harness.py PROGRAM DTYPE OUT.npz [CASE ...]

PROGRAM is a module beside this file with ``cases(dtype)``: a dict of case name -> function
returning a dict of arrays. Each case runs on its own: an exception is recorded by name with its
type and message (what refused), never hidden. The npz holds ``case/array`` entries as float64
(integers as int64); ``OUT.json`` beside it holds the refusals and which torch._C ran.
"""

import importlib
import json
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[2] / "src"))

import torchnative.ecosystem  # noqa: E402  (plain torch code; no torchnative._C on upstream)

torchnative.ecosystem.install()

import numpy as np  # noqa: E402
import torch  # noqa: E402


def as_array(v):
    if isinstance(v, torch.Tensor):
        # a tensor subclass (torchvision's tv_tensors) is read as the plain tensor it holds
        v = torch.Tensor.as_subclass(v, torch.Tensor).detach()
        if v.is_floating_point():
            return v.to(torch.float64).numpy()
        if v.dtype == torch.bool:
            return v.to(torch.int64).numpy()
        return v.to(torch.int64).numpy()
    return np.asarray(v)


def main(argv):
    name, dtype, out = argv[0], argv[1], Path(argv[2])
    wanted = set(argv[3:])
    program = importlib.import_module(name)
    arrays, refused = {}, {}
    for case, fn in program.cases(getattr(torch, dtype)).items():
        if wanted and case not in wanted:
            continue
        try:
            torch.manual_seed(0)
            for k, v in fn().items():
                arrays[f"{case}/{k}"] = as_array(v)
        except Exception as e:  # recorded by name, and the test decides
            refused[case] = f"{type(e).__name__}: {str(e)[:400]}"
            sys.stderr.write(f"--- {case}\n{traceback.format_exc()}\n")
    np.savez(out, **arrays)
    out.with_suffix(".json").write_text(json.dumps({
        "refused": refused, "torch_C": getattr(torch._C, "__file__", None),
        "torch": torch.__version__}))


if __name__ == "__main__":
    main(sys.argv[1:])
