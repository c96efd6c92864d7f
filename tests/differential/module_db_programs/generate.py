"""Upstream side of the ModuleInfo replay: every module of upstream's ``module_db`` built with
the inputs its own ``module_inputs_func`` makes (float64, seeded), run forward (float32 and the
float64 rerun the tolerance comes from) and backward to its parameters, in train and eval mode
where they differ. Writes one ``torch.save`` file: the cases ours replays, with upstream's
results. Cases that cannot be pickled (lambdas in constructor arguments) are listed by name.

    python generate.py OUT.pt [--per-module N]
"""

from __future__ import annotations

import argparse
import io
import warnings

import torch
from torch.testing._internal.common_modules import module_db

from module_case import SEED, _cast, _run

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--per-module", type=int, default=0, help="at most N inputs per module (0: all)")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    cases, skipped = [], {}
    for info in module_db:
        if torch.float64 not in info.dtypes and torch.float32 not in info.dtypes:
            continue
        modes = (False, True) if info.train_and_eval_differ else (False,)
        for training in modes:
            torch.manual_seed(SEED)
            try:
                inputs = info.module_inputs_func(info, device="cpu", dtype=torch.float64,
                                                 requires_grad=False, training=training)
            except Exception as e:
                skipped[info.name] = f"module_inputs_func: {type(e).__name__}: {e}"
                continue
            if a.per_module:
                inputs = inputs[: a.per_module]
            for i, mi in enumerate(inputs):
                name = f"{info.name}[{i}]{'train' if training else 'eval'}"
                if mi.forward_input is None:
                    continue
                cargs, ckwargs = mi.constructor_input.args, mi.constructor_input.kwargs
                fargs, fkwargs = mi.forward_input.args, mi.forward_input.kwargs
                try:
                    torch.manual_seed(SEED)
                    m = info.module_cls(*cargs, **ckwargs).to(torch.float64)
                    if info.is_lazy:  # parameters take their shapes from a first call
                        m(*fargs, **fkwargs)
                    state = {k: v.detach().clone() for k, v in m.state_dict().items()}
                    out32, g32 = _run(info.module_cls, cargs, ckwargs, state, fargs, fkwargs,
                                      training, torch.float32)
                    out64, g64 = _run(info.module_cls, cargs, ckwargs, state, fargs, fkwargs,
                                      training, torch.float64)
                    case = dict(name=name, module=info.module_cls, cargs=cargs, ckwargs=ckwargs,
                                state=_cast(state, torch.float32), fargs=_cast(fargs, torch.float32),
                                fkwargs=_cast(fkwargs, torch.float32), training=training,
                                out32=out32, out64=out64, grads32=g32, grads64=g64)
                    torch.save(case, io.BytesIO())  # picklable?
                except Exception as e:
                    skipped[name] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                    continue
                cases.append(case)
    torch.save({"cases": cases, "skipped": skipped}, a.out)
    print(f"{len(cases)} cases, {len(skipped)} skipped")


if __name__ == "__main__":
    main()
