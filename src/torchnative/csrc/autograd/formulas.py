"""Backward formulas, generated from upstream's derivatives.yaml by torchgen and translated to Python.

torchgen (vendored, unmodified) parses derivatives.yaml, matches every overload of
native_functions.yaml to its formulas (in-place and out= variants reuse the functional entry, as
upstream's codegen does), names the graph node (``AddBackward0``) and rewrites each formula to
read saved attributes (``self.sym_sizes()`` is saved at forward as ``self_sym_sizes``).
translate.py turns the C++ expressions into Python. The resulting table is plain data, cached on
disk beside the operator table; ``Entry`` compiles an overload's formulas lazily on first use.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass
from pathlib import Path

from .translate import TranslationError, translate

GENERATOR_VERSION = 1


@dataclass(slots=True)
class Formula:
    var_names: tuple  # the inputs this formula differentiates ("self",) or ("input", "weight", ...)
    source: str  # Python expression (or "" when untranslatable)
    error: str  # why there is no source


@dataclass(slots=True)
class OpFormulas:
    node: str  # "AddBackward0"
    kind: str  # "functional", "inplace", "out"
    edges: tuple  # ((arg name, "tensor"|"optional"|"list"), ...) the node's next edges, in order
    nondiff_tensor_args: tuple  # tensor arguments that must not require grad
    formulas: tuple  # Formula per derivatives entry
    saved_inputs: tuple  # ((name, python expr), ...) evaluated on the inputs at forward
    saved_outputs: tuple  # names among result, result0, result1...
    diff_outputs: tuple  # indices of the differentiable outputs (the node's grads)
    output_names: tuple  # names of all outputs (for grad_<name>)
    single_grad: bool = False
    # ((name, python expr), ...) saved values computed from the outputs after the forward
    # (``S_sym_argsize_minus_1``: ``S.sym_size(-1)``), named among saved_outputs too
    derived_outputs: tuple = ()


def _derivatives_yaml() -> Path:
    from ..ops.native_functions import yaml_paths

    return yaml_paths()[0].parent.parent.parent / "autograd" / "derivatives.yaml"


@functools.cache
def matched_derivatives() -> list:
    """native_functions.yaml's functions matched with their derivatives.yaml entries (torchgen's
    load_derivatives and match_differentiability_info): the backward and forward formula tables
    are both generated from it."""
    from torchgen.api.autograd import match_differentiability_info
    from torchgen.gen import parse_native_yaml
    from torchgen.packaged.autograd.load_derivatives import load_derivatives

    from ..ops.native_functions import yaml_paths

    nf_path, tags_path, _ = yaml_paths()
    infos, _ = load_derivatives(str(_derivatives_yaml()), str(nf_path), str(tags_path))
    native = parse_native_yaml(str(nf_path), str(tags_path)).native_functions
    return match_differentiability_info(native, infos)


def _argkind(t) -> str | None:
    s = str(t)
    if s in ("Tensor", "Tensor(a)", "Tensor(a!)") or (s.startswith("Tensor(") and "[]" not in s):
        return "tensor"
    if s.startswith("Tensor?") and "[]" not in s:
        return "optional"
    if "[]" in s and s.startswith("Tensor"):
        return "list"
    return None


def _generate() -> dict:
    from torchgen.api.autograd import gen_differentiable_outputs, uses_single_grad
    from torchgen.api import cpp
    from torchgen.context import native_function_manager
    from torchgen.model import SchemaKind

    table = {}
    for fn in matched_derivatives():
        f = fn.func
        if fn.info is None or "Default" not in fn.info or f.func.name.name.base.startswith("_foreach"):
            continue
        info = fn.info["Default"]
        if info.op is None:
            continue
        kind = {SchemaKind.functional: "functional", SchemaKind.inplace: "inplace",
                SchemaKind.out: "out"}.get(f.func.kind(), "mutable")
        with_derivs = {b.name for b in info.args_with_derivatives}
        edges, nondiff = [], []
        for a in f.func.arguments.flat_non_out:
            k = _argkind(a.type)
            if k is None:
                continue
            if a.name in with_derivs:
                edges.append((a.name, k))
            elif a.name not in info.non_differentiable_arg_names:
                nondiff.append(a.name)
        formulas = []
        for d in info.derivatives:
            try:
                formulas.append(Formula(tuple(d.var_names), translate(d.formula), ""))
            except TranslationError as e:
                formulas.append(Formula(tuple(d.var_names), "", f"untranslatable: {e}"))
        saved_in = []
        for s in info.all_saved_inputs:
            try:
                expr = translate(s.expr)
                if "TypeAndSize" in str(s.nctype.type):  # ``x_info``: only x's dtype and sizes
                    expr = f"TypeAndSize({expr})"
                saved_in.append((s.nctype.name, expr))
            except TranslationError as e:
                saved_in.append((s.nctype.name, f"untranslatable({str(e)!r})"))
        try:
            with native_function_manager(f):
                dout = gen_differentiable_outputs(fn)
        except RuntimeError:
            continue
        names = list(cpp.return_names(f))
        diff_idx = tuple(names.index(o.name) for o in dout)
        derived = []
        for s in info.all_saved_outputs:
            if s.nctype.name not in names and not s.nctype.name.startswith("result"):
                try:
                    derived.append((s.nctype.name, translate(s.expr)))
                except TranslationError as e:
                    derived.append((s.nctype.name, f"untranslatable({str(e)!r})"))
        table[str(f.func.name)] = OpFormulas(
            node=info.op, kind=kind, edges=tuple(edges), nondiff_tensor_args=tuple(nondiff),
            formulas=tuple(formulas), saved_inputs=tuple(saved_in),
            saved_outputs=tuple(s.nctype.name for s in info.all_saved_outputs),
            diff_outputs=diff_idx, output_names=tuple(names),
            single_grad=uses_single_grad(info), derived_outputs=tuple(derived))
    from torchgen.packaged.autograd.gen_variable_type import DONT_REQUIRE_DERIVATIVE

    table["__dont_require__"] = frozenset(DONT_REQUIRE_DERIVATIVE)
    # overloads whose output_differentiability is all False (histc, view.dtype, the
    # comparisons...): upstream's VariableType records nothing for them, not even a
    # NotImplemented node, and their outputs never require grad
    table["__nondiff_outputs__"] = frozenset(
        str(fn.func.func.name) for fn in matched_derivatives()
        if fn.info is not None and "Default" in fn.info
        and fn.info["Default"].output_differentiability is not None
        and not any(fn.info["Default"].output_differentiability))
    return table


def _source_key() -> str:
    here = Path(__file__).parent
    raw = _derivatives_yaml().read_bytes() + (here / "translate.py").read_bytes() + \
        Path(__file__).read_bytes()
    return hashlib.sha256(raw).hexdigest()[:12]


_TABLE: dict | None = None


def table() -> dict:
    """overload name ("add.Tensor", "mm") -> OpFormulas."""
    global _TABLE
    if _TABLE is None:
        from ..ops.native_functions import cached_generated

        _TABLE = cached_generated(f"autograd-formulas-{GENERATOR_VERSION}-{_source_key()}",
                                  _generate)
    return _TABLE
