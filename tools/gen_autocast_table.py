"""Write the CPU autocast policy table (``torchnative/csrc/dispatch/autocast_cpu.json``) from upstream.

Run under upstream's interpreter: ``.venv-upstream/bin/python tools/gen_autocast_table.py``
(``--print``: the table on stdout instead).

Which operators have an AutocastCPU kernel is read from upstream's dispatcher. Each one's policy
(CPU has three: lower_precision_fp, fp32, promote) is observed, not typed: the operator is called
under ``torch.autocast("cpu")`` with placeholder arguments, and a dispatch mode (the Python key,
below autocast) records the first cast autocast's kernel makes, then stops the call before
anything else runs. float32 inputs cast to bfloat16 mean lower_precision_fp; bfloat16 inputs
cast to float32 mean fp32; neither, but a bfloat16 input cast to float32 beside a float32 one,
means promote. The test suite checks the table against
upstream's dispatcher again (tests/differential/test_autocast.py).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch
from torch.utils._python_dispatch import TorchDispatchMode

OUT = Path(__file__).resolve().parents[1] / "src/torchnative/csrc/dispatch/autocast_cpu.json"


class _Seen(Exception):
    pass


class _Record(TorchDispatchMode):
    """Stops at the first operator that reaches the Python key: a cast (``_to_copy``) made by
    autocast's kernel, recorded as (from, to), or the operator itself (or, for a composite,
    the first operator of its decomposition), recorded as no cast."""

    def __init__(self):
        super().__init__()
        self.cast = None

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if func is torch.ops.aten._to_copy.default:
            self.cast = (str(args[0].dtype).split(".")[1],
                         str((kwargs or {}).get("dtype")).split(".")[1])
        else:
            self.cast = "none"
        raise _Seen


def _placeholder(arg, dtypes):
    """A value of the argument's type (tensors from the ``dtypes`` iterator)."""
    t = str(arg.type)
    if t in ("Tensor", "Optional[Tensor]"):
        return torch.ones(1, dtype=next(dtypes))
    if t in ("List[Tensor]", "List[Optional[Tensor]]"):
        return [torch.ones(1, dtype=next(dtypes)), torch.ones(1, dtype=next(dtypes))]
    if arg.has_default_value():
        return arg.default_value
    return {"int": 1, "SymInt": 1, "float": 1.0, "bool": False, "str": "fro",
            "List[int]": [1], "List[SymInt]": [1], "Scalar": 1, "Dimname": "N",
            "List[Dimname]": ["N"], "Optional[int]": None}.get(t, None)


def _observe(packet, overload, dtypes):
    """The first cast autocast makes before ``packet.overload`` runs on placeholder arguments
    whose tensors take their dtypes from ``dtypes``: (from, to), "none", or an error text."""
    op = getattr(packet, overload)
    it = iter(dtypes)
    args, kwargs = [], {}
    for a in op._schema.arguments:
        v = _placeholder(a, it)
        if a.kwarg_only:
            kwargs[a.name] = v
        else:
            args.append(v)
    mode = _Record()
    try:
        with torch.autocast("cpu", dtype=torch.bfloat16), mode:
            op(*args, **kwargs)
    except _Seen:
        return mode.cast
    except Exception as e:  # binding rejected the placeholders
        return f"ERR {type(e).__name__}: {str(e)[:120]}"
    return "none"


def _cycle(*ds):
    while True:
        yield from ds


def policy(packet, overload):
    f32, bf16 = torch.float32, torch.bfloat16
    # a composite that checks shapes fails on the placeholders unless autocast casts first
    first = _observe(packet, overload, _cycle(f32))
    if first == ("float32", "bfloat16"):
        return "lower_precision_fp"
    low = _observe(packet, overload, _cycle(bf16))
    if low == ("bfloat16", "float32"):
        return "fp32"
    if isinstance(first, str) and first.startswith("ERR"):
        return first
    if first == "none" and _observe(packet, overload, _cycle(f32, bf16)) == \
            ("bfloat16", "float32"):
        return "promote"
    return f"UNCLASSIFIED (float32 inputs: {first})"


def main():
    table, problems = {}, {}
    for qual in sorted(torch._C._dispatch_get_all_op_names()):
        if not qual.startswith("aten::"):
            continue
        name, _, overload = qual[len("aten::"):].partition(".")
        if not torch._C._dispatch_has_kernel_for_dispatch_key(qual, "AutocastCPU"):
            continue
        packet = getattr(torch.ops.aten, name)
        p = policy(packet, overload or "default")
        key = f"{name}.{overload}" if overload else name
        (table if not p.startswith(("ERR", "UNCLASSIFIED")) else problems)[key] = p
    doc = {"generated_by": "tools/gen_autocast_table.py", "torch": torch.__version__,
           "policies": table}
    if "--print" in sys.argv:  # the check in the test suite reads it from stdout
        print(json.dumps(doc))
    else:
        OUT.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
        print(f"{len(table)} operators written to {OUT}")
    for k, v in problems.items():
        print("not classified:", k, v, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
