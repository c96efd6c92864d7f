"""Rewrite imports of torchnative.csrc modules from the flat layout into the layer packages.

For code written against the old flat ``csrc`` (a branch started before the move): every import
of a moved module, relative or absolute, module-level or inside a function, is respelled for its
new home, as are dotted names in strings (``"torchnative.csrc.door"``) and ``csrc/<module>.py``
paths in comments. Files are edited in place; run ``python tests/unit/test_layers.py`` afterwards.

Usage: python tools/relayout_imports.py FILE...
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

P = "torchnative.csrc"
SRC = Path(__file__).resolve().parents[1] / "src"

# old module (relative to torchnative.csrc) -> its module in the layer packages
MAP = {  # old (relative to csrc) -> new
 # core: c10 values, tensors and their construction
 "refuse": "core.refuse", "tables": "core.tables", "enums": "core.enums", "dtypes": "core.dtypes",
 "typeinfo": "core.typeinfo", "promotion": "core.promotion", "cast": "core.cast",
 "device": "core.device", "layouts": "core.layouts", "size": "core.size", "storage": "core.storage",
 "tensor": "core.tensor", "construct": "core.construct", "generator": "core.generator",
 "python_data": "core.python_data", "autograd.grad_mode": "core.grad_mode", "cpu_capability": "platform.cpu_capability",
 # serialization
 "serialization": "serialization.archive",
 # ops: the operator model and registry
 "native_functions": "ops.native_functions", "schema": "ops.schema", "jit_types": "ops.jit_types",
 "torchbind": "ops.torchbind", "spellings_table": "ops.spellings_table",
 "dispatch_keys": "ops.dispatch_keys", "dispatcher": "ops.dispatcher",
 "return_types": "ops.return_types", "kernels.registry": "ops.kernel_registry",
 # dispatch: the door
 "door": "dispatch.door", "boxing": "dispatch.boxing", "structured": "dispatch.structured",
 "python_dispatch": "dispatch.python_dispatch",
 # kernels support
 "kernels.common": "kernels.support.common", "kernels.iteration": "kernels.support.iteration",
 "kernels.nn_util": "kernels.support.nn_util", "blas_threads": "kernels.support.blas_threads",
 # python binding
 "binding": "python.binding", "call_cache": "python.call_cache",
 "schema_binding": "dispatch.schema_binding", "spellings": "python.spellings",
 "manual_bindings": "python.manual_bindings", "indexing": "python.getitem",
 "torch_function": "core.torch_function", "python_utils": "python.python_utils",
 # surface
 "exports": "surface.exports", "surface": "surface.refusals", "init": "surface.init",
 "build_info": "surface.build_info", "dynamo": "surface.dynamo", "functorch": "surface.functorch",
 "jit_frontend": "surface.jit_frontend", "runtime_state": "surface.runtime_state",
 "dlpack": "surface.dlpack",
}


def new_name(full: str) -> str:
    if not full.startswith(P + "."):
        return full
    rel = full[len(P) + 1:]
    for old in sorted(MAP, key=len, reverse=True):
        if rel == old or rel.startswith(old + "."):
            return f"{P}.{MAP[old]}{rel[len(old):]}"
    return full


def _module_of(path: Path) -> tuple[str, bool]:
    try:
        parts = list(path.resolve().relative_to(SRC).with_suffix("").parts)
    except ValueError:
        return "", False
    is_pkg = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_pkg else parts), is_pkg


def _resolve(module: str, is_pkg: bool, level: int, name: str | None) -> str:
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _relative(module: str, is_pkg: bool, target: str) -> str:
    here = module.split(".") if is_pkg else module.split(".")[:-1]
    t = target.split(".")
    n = 0
    while n < min(len(here), len(t)) and here[n] == t[n]:
        n += 1
    return "." * (len(here) - n + 1) + ".".join(t[n:])


def _exists(dotted: str) -> bool:
    base = SRC.joinpath(*dotted.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def _respell(dotted: str) -> str:
    """A dotted name through a module: kept if its longest module prefix exists now."""
    parts = dotted.split(".")
    for i in range(len(parts), 2, -1):
        if _exists(".".join(parts[:i])):
            return dotted
    return new_name(dotted)


def _known_old() -> set[str]:
    return {f"{P}.{m}" for m in MAP} | {f"{P}.{m}" for m in MAP.values()}


def rewrite(path: Path) -> bool:
    text = path.read_text()
    module, is_pkg = _module_of(path)
    lines = text.splitlines(keepends=True)
    edits = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            if not module:
                continue
            base = _resolve(module, is_pkg, node.level, node.module)
        else:
            base = node.module or ""
        if not (base == P or base.startswith(P + ".")):
            continue
        groups: dict[str, list[str]] = {}
        for a in node.names:
            full = f"{base}.{a.name}"
            if full in _known_old():
                target, _, name = new_name(full).rpartition(".")
            else:
                target, name = new_name(base), a.name
            alias = a.asname or (a.name if name != a.name else None)
            groups.setdefault(target, []).append(name + (f" as {alias}" if alias else ""))
        if list(groups) == [base] and all(" as " not in n or a.asname for n, a in
                                          zip(groups[base], node.names)):
            continue
        stmts = [f"from {_relative(module, is_pkg, t) if node.level else t} import {', '.join(ns)}"
                 for t, ns in groups.items()]
        edits.append((node, stmts))
    for node, stmts in sorted(edits, key=lambda e: -e[0].lineno):
        first = lines[node.lineno - 1]
        indent = first[: len(first) - len(first.lstrip())]
        lines[node.lineno - 1: node.end_lineno] = [indent + s + "\n" for s in stmts]
    out = "".join(lines)
    # dotted names in strings and comments: map the ones that name no module of the new layout
    out = re.sub(r"torchnative\.csrc(?:\.\w+)+", lambda m: _respell(m.group(0)), out)
    for old, new in MAP.items():
        out = out.replace(f"csrc/{old.replace('.', '/')}.py", f"csrc/{new.replace('.', '/')}.py")
    if out != text:
        path.write_text(out)
        return True
    return False


def main(argv: list[str]) -> int:
    for f in argv:
        if rewrite(Path(f)):
            print(f"rewrote {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
