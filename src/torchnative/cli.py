"""The ``torchnative`` command."""

from __future__ import annotations

import argparse
import sys


def info(args) -> int:
    """Where torch and torch._C come from, the surface counts, and a small computation."""
    import torch

    from torchnative import census

    print(f"torch {torch.__version__} from {torch.__file__}")
    print(f"torch._C from {torch._C.__file__}")
    t = census.totals(census.census())
    print(f"torch._C surface: {t['implemented']} implemented, {t['refusing']} refusing by name, "
          f"{t['absent']} absent")
    try:
        a = torch.arange(6, dtype=torch.float32).reshape(2, 3)
        b = torch.ones(3, 2)
        print("a @ b =", (a @ b).tolist())
    except NotImplementedError as e:
        print(f"computation refused: {e}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="torchnative",
                                 description="PyTorch on a pure-Python torch._C")
    sub = ap.add_subparsers(dest="command")
    p = sub.add_parser("info", help="where torch comes from, surface counts, a small computation")
    p.set_defaults(fn=info)
    args = ap.parse_args(argv)
    if args.command is None:
        args = ap.parse_args(["info"])
    return args.fn(args)


if __name__ == "__main__":
    sys.exit(main())
