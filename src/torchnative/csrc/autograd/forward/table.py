"""Forward-mode formulas, generated from upstream's derivatives.yaml by torchgen and translated to
Python by the same translator as the backward formulas (../translate.py).

torchgen's loader already does upstream's rewriting: ``auto_element_wise`` and ``auto_linear``
become explicit formulas, in-place overloads reuse the functional formula with
``self_t_raw.defined() ? self_t_raw.copy_(...) : ...`` and ``original_self_p``. Besides the
formulas the table keeps, per overload, what upstream's generated VariableType needs to decide
between computing a tangent, refusing (an out= function, a formula that does not exist), or
leaving the outputs without one (an overload autograd does not differentiate).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from ..formulas import _argkind, matched_derivatives
from ..translate import TranslationError, translate

GENERATOR_VERSION = 1


@dataclass(slots=True)
class FwFormula:
    var_names: tuple  # outputs this formula gives tangents to ("result",) / ("values",)
    var_is_list: bool  # the output is a Tensor[] (unbind, split)
    source: str  # Python expression, "" when untranslatable
    error: str
    required_tangents: tuple  # inputs whose tangent decides whether the formula runs
    required_primals: tuple
    original_self: bool  # in-place: reads the value self had before the op


@dataclass(slots=True)
class FwOp:
    kind: str  # "functional", "inplace", "out", "mutable"
    inputs: tuple  # ((name, "tensor"|"optional"|"list"), ...) differentiable inputs
    outputs: tuple  # names of the outputs
    formulas: tuple  # FwFormula per forward derivative
    requires_derivative: bool  # upstream generates forward-AD handling for it at all
    cpp_name: str  # the name upstream's messages use ("add_out", "sin_")
    modifies_or_void: bool  # mutating or returning nothing (no JIT decomposition attempt)


def _generate() -> dict:
    from torchgen.api import cpp
    from torchgen.api.autograd import gen_differentiable_outputs
    from torchgen.context import native_function_manager
    from torchgen.model import SchemaKind
    from torchgen.packaged.autograd.gen_variable_type import DONT_REQUIRE_DERIVATIVE

    table = {}
    for fn in matched_derivatives():
        f = fn.func
        schema = f.func
        if schema.name.name.base.startswith("_foreach"):
            continue
        info = fn.info.get("Default") if fn.info else None
        fwds = (fn.fw_derivatives or {}).get("Default") or []
        kind = {SchemaKind.functional: "functional", SchemaKind.inplace: "inplace",
                SchemaKind.out: "out"}.get(schema.kind(), "mutable")
        nondiff = set(info.non_differentiable_arg_names) if info is not None else set()
        inputs = []
        for a in list(schema.arguments.flat_non_out) + list(schema.arguments.out):
            k = _argkind(a.type)
            if k is not None and a.name not in nondiff:
                inputs.append((a.name, k))
        try:
            with native_function_manager(f):
                douts = gen_differentiable_outputs(fn)
        except (RuntimeError, KeyError):  # dispatch-key-specific entries only
            douts = []
        base = schema.name.name.base
        cname = cpp.name(schema)
        undiff = base in DONT_REQUIRE_DERIVATIVE or cname in DONT_REQUIRE_DERIVATIVE
        formulas = []
        for d in fwds:
            try:
                src, err = translate(d.formula), ""
            except TranslationError as e:
                src, err = "", f"untranslatable: {e}"
            formulas.append(FwFormula(
                tuple(d.var_names), "[]" in str(d.var_types[0]) or "List" in str(d.var_types[0]),
                src, err, tuple(d.required_inputs_fw_grad or ()),
                tuple(d.required_inputs_primal or ()), bool(d.required_original_self_value)))
        returns_void = len(schema.returns) == 0
        table[str(schema.name)] = FwOp(
            kind=kind, inputs=tuple(inputs), outputs=tuple(cpp.return_names(f)),
            formulas=tuple(formulas),
            requires_derivative=(not undiff) and bool(inputs) and bool(douts),
            cpp_name=cname,
            modifies_or_void=schema.is_mutable or returns_void or kind != "functional")
    return table


_TABLE: dict | None = None


def table() -> dict:
    """overload name ("add.Tensor") -> FwOp, for every overload of native_functions.yaml."""
    global _TABLE
    if _TABLE is None:
        from ...ops.native_functions import cached_generated
        from ..formulas import _source_key

        # the backward table's key covers derivatives.yaml and the translator
        mine = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
        _TABLE = cached_generated(f"forward-formulas-{GENERATOR_VERSION}-{_source_key()}-{mine}",
                                  _generate)
    return _TABLE
