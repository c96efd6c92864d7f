"""Read facts off the real torch._C (2.13.0) that no upstream data file holds, into our tables.

Run under upstream's interpreter: .venv-upstream/bin/python tools/gen_c_tables.py
Writes src/torchnative/csrc/core/tables/c_enums.json: every pybind enum in torch._C and its
submodules (name -> {member: value}) and which of them export their members into their module,
the dispatch-key facts the dispatcher needs (the order keys print in, which are alias keys), and
the operators C++ registers outside native_functions.yaml.
"""

from __future__ import annotations

import json
import types
from pathlib import Path

import torch

OUT = Path(__file__).resolve().parents[1] / "src/torchnative/csrc/core/tables/c_enums.json"


def enums() -> dict:
    out = {}
    seen = set()

    def visit(mod, prefix):
        for name in dir(mod):
            obj = getattr(mod, name, None)
            if isinstance(obj, types.ModuleType) and obj.__name__.startswith("torch._C") \
                    and id(obj) not in seen:
                seen.add(id(obj))
                visit(obj, f"{prefix}.{name}")
            elif isinstance(obj, type) and isinstance(getattr(obj, "__members__", None), dict):
                members = {k: int(v) for k, v in obj.__members__.items()}
                out[f"{prefix}.{name}"] = members

    visit(torch._C, "torch._C")
    return dict(sorted(out.items()))


def exported_enums(names) -> list[str]:
    """The enums whose members pybind11 also exported into their module (``export_values``):
    ``torch._C.SUM`` is ``torch._C.AggregationType.SUM``, and ``from torch._C import *`` hands it
    to ``torch``."""
    import importlib

    out = []
    for qualname in names:
        mod_name, _, name = qualname.rpartition(".")
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        cls = getattr(mod, name)
        if all(getattr(mod, m, None) is v for m, v in cls.__members__.items()):
            out.append(qualname)
    return out


def dispatch_facts() -> dict:
    C = torch._C
    DK = C.DispatchKey
    full = C._dispatch_keyset_full()
    order = [k.strip() for k in repr(full)[len("DispatchKeySet("):-1].split(",")]
    alias = [k for k in DK.__members__ if C._dispatch_is_alias_key(DK.__members__[k])]
    keysets = {}
    for name in ("_additional_keys_to_prop_for_wrapper_tensors", "_after_ADInplaceOrView_keyset",
                 "_after_autograd_keyset", "_dispatch_autogradother_backends"):
        text = repr(getattr(C, name))
        keysets[name] = [k.strip() for k in text[len("DispatchKeySet("):-1].split(",")]
    return {"runtime_order": order, "alias_keys": alias, "keysets": keysets}


def cpp_ops() -> list[dict]:
    """Operators upstream's C++ registers beyond native_functions.yaml (profiler::, quantized::,
    c10d::, TorchScript's aten builtins ...): their schemas and the keys with kernels. Operators
    registered from Python (prims::, ...) are left out: upstream's Python registers them on us."""
    import os
    import re

    import torchgen
    from torchgen.gen import parse_native_yaml

    base = os.path.join(os.path.dirname(torchgen.__file__), "packaged/ATen/native")
    parsed = parse_native_yaml(os.path.join(base, "native_functions.yaml"),
                               os.path.join(base, "tags.yaml"))
    native = {f"aten::{f.func.name}" for f in parsed.native_functions}
    out = []
    for schema in torch._C._jit_get_all_schemas():
        name = schema.name + (f".{schema.overload_name}" if schema.overload_name else "")
        if name in native:
            continue
        try:
            dump = torch._C._dispatch_dump(name)
        except RuntimeError:
            dump = ""
        debug = re.search(r"debug: registered at (\S+)", dump)
        if debug and debug.group(1).split(":")[0].endswith(".py"):
            continue  # registered by upstream Python at import
        keys = sorted(set(re.findall(r"^(\w+)(?:\[\w+\])?: registered at", dump, re.M))
                      - {"debug"})
        out.append({"schema": str(schema), "keys": keys})
    return sorted(out, key=lambda d: d["schema"])


def flags() -> dict:
    """Global switches upstream exposes as ``_get_X()`` / ``_set_X(value)`` pairs, with their
    default values (bool/int/float/str): e.g. cudnn enabled, benchmark, allow_tf32."""
    out = {}
    C = torch._C
    for name in dir(C):
        if not name.startswith("_get_") or not hasattr(C, "_set_" + name[len("_get_"):]):
            continue
        try:
            value = getattr(C, name)()
        except Exception:
            continue
        if isinstance(value, (bool, int, float, str)) or (
                isinstance(value, list) and all(isinstance(v, int) for v in value)):
            out[name[len("_get_"):]] = value
    return dict(sorted(out.items()))


def main() -> None:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    found = enums()
    data = {"enums": found, "exported": exported_enums(found), "dispatch": dispatch_facts(),
            "cpp_ops": cpp_ops(), "flags": flags()}
    OUT.write_text(json.dumps(data, indent=0, sort_keys=False))
    print(f"{len(data['enums'])} enums, {len(data['cpp_ops'])} C++ operators -> {OUT}")


if __name__ == "__main__":
    main()
