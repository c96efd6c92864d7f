"""Everything about one operator overload, in one place: ``python -m torchnative.explain add.Tensor``.

Prints its schema and tags, the dispatch keys upstream's build has a kernel for, the path the
door takes on CPU and meta tensors (our kernel, a composite, a structured derivation from the
functional kernel, a Python kernel, upstream's decomposition, or a refusal) with ``file:line``,
its ``derivatives.yaml`` entry with the Python formula torchnative translated it to and the helpers
that formula calls, and its rows in the agreement reports (docs/agreement.md, docs/gradients.md).

A name without an overload (``mm``) means the default overload; ``aten::`` is optional.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path

REPORTS = ("agreement.md", "gradients.md")


def find_op(name: str):
    """The operator handle of ``[ns::]name[.overload]``; LookupError names what is missing."""
    import torch  # noqa: F401  (installs torchnative's torch._C and upstream's registrations)
    from torchnative.csrc.ops.dispatcher import REGISTRY

    qual = name if "::" in name else f"aten::{name}"
    base, _, overload = qual.partition(".")
    op = REGISTRY.find(base, overload)
    if op is None:
        known = sorted(REGISTRY.overloads(base)) if REGISTRY.overloads(base) else []
        hint = f"; its overloads: {', '.join(o or '(default)' for o in known)}" if known else ""
        raise LookupError(f"no operator {qual}{hint}")
    return op


def where(fn) -> str:
    """``file:line name`` of a function (the file relative to its installed package root)."""
    fn = inspect.unwrap(fn)
    try:
        path = Path(inspect.getsourcefile(fn))
        source, line = inspect.getsourcelines(fn)
        # the def line, past any decorators (a kernel's @kernel(...) registration)
        line += next((i for i, s in enumerate(source) if s.lstrip().startswith(("def ", "async def "))), 0)
    except (TypeError, OSError):
        return repr(fn)
    for marker in ("torchnative", "torch", "torchgen"):
        if marker in path.parts:
            i = len(path.parts) - 1 - path.parts[::-1].index(marker)
            path = Path(*path.parts[i:])
            break
    return f"{path}:{line} {getattr(fn, '__qualname__', getattr(fn, '__name__', ''))}"


def serving(op, key: str) -> tuple[str, str]:
    """(path, where its code is) for a call of ``op`` on ``key`` tensors, as the door resolves it."""
    from torchnative.csrc.dispatch import door
    from torchnative.csrc.ops import kernel_registry as K

    short = door._kernel_name(op)
    cia = door.resolve_composite_implicit(op)
    impl = cia if cia is not None else door.resolve(op, key)
    path = impl.path
    if path == "kernel":
        return path, where(K.KERNELS[short])
    if path == "composite":
        fast = f"; without autograd or modes: {where(K.FAST[short])}" if short in K.FAST else ""
        return "composite (our CompositeImplicitAutograd kernel)", where(K.COMPOSITE[short]) + fast
    if path == "structured":
        functional = op.native.functional
        sibling = find_op(functional)
        kind, code = serving(sibling, key)
        return (f"structured: {op.native.kind} variant of {functional} ({kind})", code)
    if path.startswith("python:"):
        k = path.split(":", 1)[1]
        k = "CompositeImplicitAutograd" if k == "CIA" else k
        return f"Python kernel registered at {k}", where(op.py_kernels[k][0])
    if path == "decomposition":
        return "upstream's Python decomposition", where(door._decomposition(op))
    if path == "meta":
        return "upstream's meta function", where(door._upstream_meta(op))
    if path == "refused":
        return "refused (TorchnativeNotImplementedError names the overload)", ""
    return path, where(impl.fn)


def derivative_entry(op) -> tuple[str, str] | None:
    """(the derivatives.yaml entry's text, its name line) for the op or its functional sibling."""
    from torchnative.csrc.autograd.formulas import _derivatives_yaml

    names = [op.name.split("::", 1)[1]]
    if op.native is not None and op.native.functional:
        names.append(op.native.functional)
    text = _derivatives_yaml().read_text().splitlines()
    for want in names:
        for i, line in enumerate(text):
            if not line.startswith("- name: "):
                continue
            head = line[len("- name: "):].split("(", 1)[0]
            if head == want:
                j = i + 1
                while j < len(text) and not text[j].startswith("- name: ") and \
                        (text[j].startswith(" ") or not text[j].strip()):
                    j += 1
                return "\n".join(text[i:j]).rstrip(), want
    return None


def gradient(op) -> list[str]:
    from torchnative.csrc.autograd.formulas import table
    from torchnative.csrc.autograd.generated import _free_names, _resolve, spec_for

    key = op.name.split("::", 1)[1]
    out: list[str] = []
    entry = derivative_entry(op)
    if entry is None:
        out.append("  derivatives.yaml: no entry" + (
            " (its composite is differentiated through the operators it calls)"
            if "CompositeImplicitAutograd" in op.static_keys else ""))
    else:
        text, name = entry
        out.append(f"  derivatives.yaml entry ({name}):")
        out += ["    " + line for line in text.splitlines()]
    f = table().get(key)
    if f is None:
        return out
    spec = spec_for(key)
    out.append(f"  node {f.node} ({f.kind}); translated formulas:")
    for fm in f.formulas:
        var = ", ".join(fm.var_names)
        if not fm.source:
            out.append(f"    {var}: (not translated: {fm.error})")
            continue
        out.append(f"    {var}: {fm.source}")
        for n in _free_names(fm.source):
            fn = _resolve(n)
            if inspect.isfunction(inspect.unwrap(fn)) if callable(fn) else False:
                out.append(f"      {n} -> {where(fn)}")
    if spec is not None and not spec.available:
        out.append(f"    (unavailable: {spec.missing})")
    if f.saved_inputs:
        out.append("  saved: " + ", ".join(n for n, _ in f.saved_inputs) +
                   (", " + ", ".join(f.saved_outputs) if f.saved_outputs else ""))
    return out


# OpInfo entries name torch.linalg.cross "linalg.cross", aten calls it linalg_cross
_NAMESPACES = ("linalg_", "special_", "fft_", "_")
_ENTRY_PREFIXES = ("nn.functional.", "linalg.", "special.", "fft.", "masked.", "_refs.", "ops.aten.")


def _entry_op(entry: str) -> str:
    """The operator an OpInfo entry is named after: ``nn.functional.conv2d`` -> conv2d,
    ``softmax.with_dtype`` -> softmax (a variant), ``scatter_reduce.sum`` -> scatter_reduce."""
    for prefix in _ENTRY_PREFIXES:
        if entry.startswith(prefix):
            entry = entry[len(prefix):]
            break
    return entry.split(".", 1)[0]


def report_rows(op, docs: Path) -> list[str]:
    """The op's rows in the agreement reports: rows of the OpInfo entries named after the
    operator, then how many other rows reached this overload on their way (their served-by
    column names it)."""
    out: list[str] = []
    key = op.name
    base = key.split("::", 1)[1].split(".", 1)[0]
    # OpInfo entries are named after torch's functions, which reach aten's operators: an
    # operator of another namespace (prims::add) has no entry of its own
    names = ({base} | {base[len(p):] for p in _NAMESPACES if base.startswith(p)}
             if key.startswith("aten::") else set())
    for report in REPORTS:
        path = docs / report
        if not path.exists():
            out.append(f"  {report}: not found at {path}")
            continue
        header, rows, others = None, [], set()
        for line in path.read_text().splitlines():
            if not line.startswith("|"):
                header = None
                continue
            if header is None:
                header = line
                continue
            if set(line) <= set("|-: "):
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            entry = cells[0]
            if _entry_op(entry) in names:
                rows.append((header, line))
            elif any(f"{key}:" in c for c in cells[1:]):
                others.add(entry)
        out.append(f"  {report}: {len(rows)} rows of OpInfo entries for {base}")
        last = None
        for header, line in rows:
            if header != last:
                out.append("    " + header)
                last = header
            out.append("    " + line)
        if others:
            listed = sorted(others)
            more = f", ... ({len(listed) - 8} more)" if len(listed) > 8 else ""
            out.append(f"    reached on the way by {len(listed)} other entries: "
                       f"{', '.join(listed[:8])}{more}")
    return out


def explain(name: str, docs: Path | None = None) -> str:
    op = find_op(name)
    nf = op.native
    lines = [op.name, f"  schema: {op.full_schema_str}",
             f"  tags: {', '.join(sorted(getattr(t, 'name', str(t)) for t in op.tags)) or '(none)'}"]
    if nf is not None:
        lines.append(f"  kind: {nf.kind}" + (f" (functional sibling {nf.functional})"
                                              if nf.functional else ""))
        lines.append(f"  variants: {', '.join(sorted(nf.variants)) or '(none)'}" +
                     (f"; python module torch.{nf.python_module}" if nf.python_module else ""))
    lines.append(f"  dispatch keys with a kernel in upstream's build: "
                 f"{', '.join(sorted(op.static_keys)) or '(none)'}")
    if op.py_kernels:
        lines.append(f"  Python kernels registered: {', '.join(sorted(op.py_kernels))}")
    lines.append("served by (the door's resolution):")
    for key in ("CPU", "Meta"):
        path, code = serving(op, key)
        lines.append(f"  {key}: {path}" + (f"\n    {code}" if code else ""))
    lines.append("gradient:")
    lines += gradient(op)
    lines.append("agreement with upstream:")
    lines += report_rows(op, docs if docs is not None else default_docs())
    return "\n".join(lines)


def default_docs() -> Path:
    """docs/ of the source checkout this package runs from (absent from an installed wheel)."""
    return Path(__file__).resolve().parents[2] / "docs"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m torchnative.explain", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ops", nargs="+", help="overloads, e.g. add.Tensor mm aten::sum.dim_IntList")
    ap.add_argument("--docs", type=Path, default=None, help="where the agreement reports are")
    args = ap.parse_args(argv)
    status = 0
    for i, name in enumerate(args.ops):
        if i:
            print()
        try:
            print(explain(name, args.docs))
        except LookupError as e:
            print(f"error: {e.args[0]}", file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main())
