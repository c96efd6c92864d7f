"""Train the four digits-C source models the package ships (src/torchnative/adapt/weights/):
the BatchNorm and GroupNorm CNNs and their jointly trained TTT twins, seeded, one thread.

Run on upstream torch (the reference; its float32 training is what the shipped files hold):

    PYTHONPATH=src OMP_NUM_THREADS=1 .venv-upstream/bin/python tools/train_digits_sources.py

Retraining on another CPU or torch gives other last bits, hence other weights and other figures
in docs/adapt.md (which is why the files are shipped rather than trained on first use).
"""

from __future__ import annotations

import os
import sys

import torch
from safetensors.torch import save_file

from torchnative.adapt import digits_models as dm


def main() -> None:
    torch.set_num_threads(1)
    dm.SHIPPED.mkdir(parents=True, exist_ok=True)
    for norm in dm.ARCHS:
        for ttt in (False, True):
            model = dm.train(norm, ttt=ttt)
            path = dm.shipped_path(norm, ttt)
            tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
            save_file({k: v.detach().contiguous() for k, v in model.state_dict().items()}, str(tmp))
            os.replace(tmp, path)
            print(f"{path.name}: torch {torch.__version__}, "
                  f"{torch.backends.cpu.get_cpu_capability()}", file=sys.stderr)


if __name__ == "__main__":
    main()
