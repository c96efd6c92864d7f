"""The core ATen IR census: for every overload tagged ``core`` in native_functions.yaml, and for
the in-place and out= siblings of those, which path the door resolves on CPU (our kernel, our
composite, a structured derivation from the functional kernel, upstream's decomposition) or
whether it refuses.

``python -m torchnative.core_census`` prints the counts (``-v``: every overload).
"""

from __future__ import annotations

import argparse
from collections import Counter


def _path(op) -> str:
    from torchnative.csrc.dispatch.door import resolve, resolve_composite_implicit

    cia = resolve_composite_implicit(op)
    return (cia if cia is not None else resolve(op, "CPU")).path


def core_paths() -> tuple[dict[str, str], dict[str, str]]:
    """({core overload: path}, {in-place/out= sibling of a core overload: path})."""
    import torch  # noqa: F401  (installs torchnative's torch._C)
    from torchnative.csrc.ops.dispatcher import REGISTRY
    from torchnative.csrc.ops.native_functions import native_functions

    def name(nf) -> str:
        return nf.name + ("." + nf.overload if nf.overload else "")

    core, siblings = {}, {}
    functionals = set()
    for nf in native_functions():
        if "core" in nf.tags:
            op = REGISTRY.find(nf.qualname, nf.overload)
            core[name(nf)] = "missing" if op is None else _path(op)
            functionals.add(name(nf))
    for nf in native_functions():
        if nf.kind in ("inplace", "out") and nf.functional in functionals:
            op = REGISTRY.find(nf.qualname, nf.overload)
            siblings[name(nf)] = "missing" if op is None else _path(op)
    return core, siblings


def main() -> None:
    ap = argparse.ArgumentParser(description="core ATen IR: the path serving each overload")
    ap.add_argument("-v", action="store_true", help="list every overload")
    args = ap.parse_args()
    core, siblings = core_paths()
    for label, table in (("core overloads", core), ("their in-place/out= siblings", siblings)):
        counts = Counter(table.values())
        print(f"{label}: {len(table)} — " +
              ", ".join(f"{p} {n}" for p, n in counts.most_common()))
        refused = sorted(k for k, v in table.items() if v in ("refused", "missing"))
        print(f"  refusing: {', '.join(refused) if refused else 'none'}")
        if args.v:
            for k in sorted(table):
                print(f"  {k}: {table[k]}")


if __name__ == "__main__":
    main()
