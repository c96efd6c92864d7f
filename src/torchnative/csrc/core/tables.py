"""Access to the generated tables in ``tables/`` (facts read off upstream; see tools/)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

_DIR = Path(__file__).with_name("tables")


@functools.cache
def c_enums() -> dict:
    return json.loads((_DIR / "c_enums.json").read_text())


@functools.cache
def cpp_ops_by_qualname() -> dict[str, list[dict]]:
    """Operators upstream's C++ registers outside native_functions.yaml, by qualified name."""
    out: dict[str, list[dict]] = {}
    for op in c_enums()["cpp_ops"]:
        out.setdefault(op["schema"].split("(")[0].split(".")[0], []).append(op)
    return out
