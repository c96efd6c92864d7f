"""The layer contract of ``torchnative.csrc`` (docs/architecture.md): imports run one way only.

Every import in every module counts — at module level, inside a function, and a module named in
a string (``sys.modules.get(...)``, ``importlib.import_module(...)``) — because a function-local
import is still a dependency, only a later one. A module may import its own layer and the layers
below it, and no import cycle may form, not even inside one layer (a lower module that needs
a higher one's code has it installed at import: docs/architecture.md). The upward imports that
remain are listed in ``UPWARD`` below; the list may only shrink: a new upward import fails, and
so does an entry that no longer occurs.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

# the checkout this file sits in (found upward, so the file may move within tests/)
SRC = next(p for p in Path(__file__).resolve().parents if (p / "src" / "torchnative").is_dir()) \
    / "src" / "torchnative"
CSRC = SRC / "csrc"
PKG = "torchnative.csrc"

# bottom first; a module's layer is the first package under csrc it lives in
LAYERS = ["platform", "random", "core", "serialization", "ops", "dispatch", "kernels", "autograd", "functorch",
          "python", "distributed", "surface"]

# (importing module, imported module), both relative to torchnative.csrc
UPWARD: set[tuple[str, str]] = set()

def module_name(path: Path, root: Path = CSRC) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def csrc_modules(root: Path = CSRC) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def _resolve(module: str, is_pkg: bool, level: int, name: str | None, pkg: str = PKG) -> str:
    base = f"{pkg}.{module}".split(".") if module else pkg.split(".")
    if not is_pkg:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _is_lookup(node: ast.AST) -> bool:
    """``sys.modules[...]``, ``sys.modules.get(...)``, ``import_module(...)``, ``__import__(...)``."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Attribute) and node.value.attr == "modules"
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Attribute):
            return f.attr == "import_module" or (
                f.attr == "get" and isinstance(f.value, ast.Attribute) and f.value.attr == "modules")
        return isinstance(f, ast.Name) and f.id in ("import_module", "__import__")
    return False


def imports_of(module: str, path: Path, known: set[str], pkg: str = PKG,
               any_string: bool = True) -> set[str]:
    """The modules of ``pkg`` that ``module`` imports anywhere in its body (relative to ``pkg``).
    A module named in a string counts: any dotted name under ``pkg`` (``any_string``), or only
    one looked up as a module (``sys.modules[...]``, ``importlib.import_module(...)``)."""
    is_pkg = path.name == "__init__.py"
    found: set[str] = set()
    tree = ast.parse(path.read_text(), str(path))
    lookups = set() if any_string else {id(c) for n in ast.walk(tree) if _is_lookup(n)
                                        for c in ast.walk(n) if isinstance(c, ast.Constant)}

    def add(full: str) -> None:
        if not full.startswith(pkg + "."):
            return
        rel = full[len(pkg) + 1:]
        while rel and rel not in known:
            rel = rel.rpartition(".")[0]
        if rel and rel != module:
            found.add(rel)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, is_pkg, node.level, node.module, pkg) if node.level \
                else node.module
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                add(sub if sub[len(pkg) + 1:] in known else base)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.startswith(pkg + ".") and " " not in node.value and (
                    any_string or id(node) in lookups):
                add(node.value)
    return found


def layer_of(module: str) -> int:
    top = module.split(".")[0]
    if module == "kernels.support" or module.startswith("kernels.support."):
        return LAYERS.index("kernels") - 0.5  # the kernels' shared conventions sit below them
    if top not in LAYERS:
        raise AssertionError(f"torchnative.csrc.{module} is in no layer: add its package to "
                             "LAYERS (and to docs/architecture.md)")
    return LAYERS.index(top)


@functools.cache
def _csrc_graph() -> tuple:
    mods = csrc_modules()
    known = set(mods)
    return tuple((m, frozenset(imports_of(m, p, known))) for m, p in mods.items())


def import_graph() -> dict[str, set[str]]:
    """csrc's modules and what each imports (a fresh copy: tests may add edges to it)."""
    return {m: set(ts) for m, ts in _csrc_graph()}


def upward_imports(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    return {(m, t) for m, ts in graph.items() for t in ts if layer_of(t) > layer_of(m)}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    advanced = True
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_every_module_is_in_a_layer():
    for m in csrc_modules():
        if m:
            layer_of(m)


def test_the_documented_order_is_the_checked_order():
    doc = (CSRC.parents[2] / "docs" / "architecture.md").read_text()
    line = doc.split("Layer order, bottom first", 1)[1].split("**")[1]
    names = [w.split(" (")[0].strip(" .") for w in line.replace("\n", " ").split(",")]
    assert [n for n in names if n] == LAYERS


def test_no_new_upward_import():
    new = upward_imports(import_graph()) - UPWARD
    assert not new, "imports from a lower layer to a higher one (register from above instead):\n" + \
        "\n".join(f"  {a} -> {b}" for a, b in sorted(new))


def test_allowlist_only_shrinks():
    gone = UPWARD - upward_imports(import_graph())
    assert not gone, "no longer upward; remove from UPWARD:\n" + \
        "\n".join(f"  {a} -> {b}" for a, b in sorted(gone))


def test_the_check_sees_function_local_and_string_imports(tmp_path):
    """Controls: an upward import inside a function, and one named in a string, are found."""
    src = ("def f():\n    from ..dispatch import door\n"
           "def g():\n    import sys\n    return sys.modules['torchnative.csrc.python.binding']\n")
    path = tmp_path / "probe.py"
    path.write_text(src)
    known = {"core.probe", "dispatch.door", "python.binding"}
    found = imports_of("core.probe", path, known)
    assert found == {"dispatch.door", "python.binding"}
    graph = {"core.probe": found, "dispatch.door": {"core.probe"}, "python.binding": set()}
    assert ("core.probe", "dispatch.door") in upward_imports(graph)
    assert cycles(graph) == [["core.probe", "dispatch.door"]]


def src_import_graph() -> dict[str, set[str]]:
    """All of src/torchnative (``_C``, the libraries beside csrc): there a dotted string is a
    module only where it is looked up as one (a format name or a ``-m`` program is not)."""
    mods = csrc_modules(SRC)
    known = set(mods)
    return {m: imports_of(m, p, known, "torchnative", any_string=False) for m, p in mods.items()}


def test_no_cycle():
    """The import graph has no cycle at all: between layers or inside one, and none through
    the rest of src/torchnative (csrc reaching torchnative._C by name would close one)."""
    found = cycles(import_graph()) + cycles(src_import_graph())
    assert not found, "modules that import each other (move the shared piece down, or have the " \
        "higher module install itself at import):\n" + "\n".join(f"  {c}" for c in found)


def test_the_check_catches_a_cycle_inside_a_layer(tmp_path):
    """Controls: two modules of one layer importing each other inside functions form a cycle,
    and an import the layout removed (construct -> python_data), put back into the real graph,
    closes one again."""
    (tmp_path / "a.py").write_text("def f():\n    from . import b\n")
    (tmp_path / "b.py").write_text("def g():\n    from .a import f\n")
    known = {"core.a", "core.b"}
    graph = {m: imports_of(m, tmp_path / f"{m.split('.')[1]}.py", known) for m in known}
    assert graph == {"core.a": {"core.b"}, "core.b": {"core.a"}}
    assert cycles(graph) == [["core.a", "core.b"]]
    real = import_graph()
    assert cycles(real) == []
    real["core.construct"] = real["core.construct"] | {"core.python_data"}
    assert ["core.construct", "core.python_data"] in cycles(real)


def test_the_src_check_sees_lookups_by_name_only(tmp_path):
    """Controls: ``sys.modules["torchnative._C"]`` in a csrc module is an edge up to _C (which
    imports csrc back: a cycle); the same name as a plain string constant is not."""
    (tmp_path / "probe.py").write_text(
        'FORMAT = "torchnative._C"\n'
        'def f():\n    import sys\n    return sys.modules["torchnative._C"].x\n')
    (tmp_path / "plain.py").write_text('FORMAT = "torchnative._C"\n')
    known = {"_C", "csrc.core.probe", "csrc.core.plain"}
    found = imports_of("csrc.core.probe", tmp_path / "probe.py", known, "torchnative", False)
    assert found == {"_C"}
    assert imports_of("csrc.core.plain", tmp_path / "plain.py", known, "torchnative", False) == set()
    assert cycles({"_C": {"csrc.core.probe"}, "csrc.core.probe": found}) == \
        [["_C", "csrc.core.probe"]]


if __name__ == "__main__":
    g = import_graph()
    up = sorted(upward_imports(g))
    print(f"{len(up)} upward imports; cycles: {cycles(g)}")
    for a, b in up:
        print(f'    ("{a}", "{b}"),')
