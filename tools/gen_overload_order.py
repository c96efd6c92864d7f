"""Write the order in which upstream's ``torch.ops.aten.<name>(...)`` tries an operator's
overloads (``src/torchnative/csrc/ops/overload_order.json``), read from upstream's
``torch._C._jit_get_operation``: a packet call binds the first overload whose schema accepts the
arguments, so the order decides which one runs when several accept them.

Run under upstream's interpreter: ``.venv-upstream/bin/python tools/gen_overload_order.py``
(``--print``: the table on stdout). tests/differential/test_overload_order.py checks it again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[1] / "src/torchnative/csrc/ops/overload_order.json"


def main() -> None:
    names = sorted({q.split(".")[0] for q in torch._C._dispatch_get_all_op_names()
                    if q.startswith("aten::")})
    order = {}
    for qual in names:
        try:
            _, overloads = torch._C._jit_get_operation(qual)
        except RuntimeError:
            continue
        if len(overloads) > 1:
            order[qual] = [o or "default" for o in overloads]
    doc = {"generated_by": "tools/gen_overload_order.py", "torch": torch.__version__,
           "order": order}
    if "--print" in sys.argv:
        print(json.dumps(doc))
    else:
        OUT.write_text(json.dumps(doc, separators=(",", ":"), sort_keys=True) + "\n")
        print(f"{len(order)} operators written to {OUT}")


if __name__ == "__main__":
    main()
