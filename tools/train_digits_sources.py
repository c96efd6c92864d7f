"""Train the four digits-C source models the package ships (src/torchnative/adapt/weights/):
the BatchNorm and GroupNorm CNNs and their jointly trained TTT twins, seeded; print each one's
clean error and, for the two CNNs, their source error on the continual severity-5 stream (64
digits per corruption, docs/adapt.md's first row).

The shipped files were made on upstream torch (the reference), one thread:

    PYTHONPATH=src OMP_NUM_THREADS=1 .venv-upstream/bin/python tools/train_digits_sources.py

Retraining on another CPU, capability, thread count or torch gives other last bits, hence other
weights and other figures (which is why the files are shipped rather than trained on first use);
``--out DIR`` writes elsewhere to see by how much, e.g. under ``ATEN_CPU_CAPABILITY=avx2``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from torchnative.adapt import bench
from torchnative.adapt import digits_c as dc
from torchnative.adapt import digits_models as dm


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=dm.SHIPPED, help="folder (default: the package's)")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    _, _, x, y = dc.load_digits_split()
    print(f"torch {torch.__version__}, {torch.backends.cpu.get_cpu_capability()}, "
          f"{torch.get_num_threads()} thread(s)", file=sys.stderr)
    for norm in dm.ARCHS:
        for ttt in (False, True):
            model = dm.train(norm, ttt=ttt)
            path = args.out / dm.shipped_path(norm, ttt).name
            dm.save(model, path)
            line = f"{path.name}: clean error {100 * dm.error(model, x, y):.1f}%"
            if not ttt:
                cell = bench.run("source", "continual", arch=norm, per_domain=64, weights=path)
                line += f", continual source error {cell['error']:.1f}%"
            print(line)


if __name__ == "__main__":
    main()
