"""The Python spellings of ATen operators, as upstream's binding generator defines them.

Upstream generates its C++ Python bindings (python_torch_functions.cpp, python_variable_methods.cpp,
python_nn_functions.cpp, ...) with torchgen's gen_python_functions. We run the same selection,
grouping and sorting over the same yaml, and keep per Python name the ordered signatures that
upstream's PythonArgParser tries, each with the overload it calls (and its ``out=`` overload).
Cached on disk with the operator table.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from .native_functions import _rebuilt, cached_generated

# Python namespace -> torchgen predicate name (gen_python_functions.gen's list, in its order)
NAMESPACES = {
    "Tensor": "is_py_variable_method",
    "torch": "is_py_torch_function",
    "torch.nn": "is_py_nn_function",
    "torch.fft": "is_py_fft_function",
    "torch.linalg": "is_py_linalg_function",
    "torch.nested": "is_py_nested_function",
    "torch.sparse": "is_py_sparse_function",
    "torch.special": "is_py_special_function",
}


@dataclass(frozen=True, slots=True)
class PyArg:
    name: str
    type: str  # PythonArgParser type string: "Tensor", "Scalar", "IntArrayRef[2]", ...
    default: str | None  # as upstream writes it ("None", "1", "False", ...), None if required
    kwarg_only: bool
    role: str  # "input", "out", "tensor_option"

    def __reduce__(self):
        return _rebuilt(self)


@dataclass(frozen=True, slots=True)
class PySignature:
    text: str  # upstream's PythonArgParser signature string
    args: tuple[PyArg, ...]
    base: str  # overload name of the functional/inplace version, e.g. "add.Tensor"
    outplace: str | None  # overload name called when out= is given, e.g. "add.out"
    deprecated: bool
    method: bool

    def __reduce__(self):
        return _rebuilt(self)


def _pyargs(sig, shared: dict) -> tuple[PyArg, ...]:
    """The signature's arguments, equal ones the same object (``shared``), so the pickle loads
    each distinct argument once instead of once per signature."""
    out = []
    n_pos = len(sig.input_args)
    args = sig.arguments(skip_outputs=False)
    out_names = {a.name for a in sig.output_args.outputs} if sig.output_args else set()
    topt = {a.name for a in sig.tensor_options_args}
    for i, a in enumerate(args):
        role = "out" if (a.name == "out" and sig.output_args) else (
            "tensor_option" if a.name in topt else "input")
        text = a.argument_str(method=sig.method, symint=True)
        type_str = text.split(" ")[0]
        default = text.split("=", 1)[1] if "=" in text else None
        arg = PyArg(a.name, type_str, default, i >= n_pos, role)
        out.append(shared.setdefault(arg, arg))
    del out_names
    return tuple(out)


def _generate() -> dict:
    from torchgen.gen import parse_native_yaml
    from torchgen.packaged.autograd import gen_python_functions as g

    from .native_functions import yaml_paths

    yaml_path, tags_path, deprecated_path = yaml_paths()
    fns = parse_native_yaml(str(yaml_path), str(tags_path)).native_functions
    fns = [f for f in fns if g.should_generate_py_binding(f)]
    from torchgen.api import cpp

    table: dict[str, dict[str, list[PySignature]]] = {}
    shared_args: dict[PyArg, PyArg] = {}
    # overload name -> (torch.return_types name, field names), as python_return_types.cpp has it
    structseqs: dict[str, tuple[str, list[str]]] = {}
    for ns, pred_name in NAMESPACES.items():
        method = ns == "Tensor"
        pairs = g.load_signatures(fns, str(deprecated_path), method=method)
        grouped = g.group_filter_overloads(pairs, getattr(g, pred_name))
        entries: dict[str, list[PySignature]] = {}
        for name in sorted(grouped, key=str):
            groups = g.group_overloads(grouped[name], symint=True)
            sigs = []
            for grp in groups:
                sig = grp.signature
                sigs.append(PySignature(
                    text=sig.signature_str(symint=True),
                    args=_pyargs(sig, shared_args),
                    base=str(grp.base.func.name),
                    outplace=str(grp.outplace.func.name) if grp.outplace else None,
                    deprecated=sig.deprecated if hasattr(sig, "deprecated") else
                    type(sig).__name__ == "PythonSignatureDeprecated",
                    method=method,
                ))
            entries[str(name)] = sigs
        table[ns] = entries
        if not method:
            for pair in pairs:
                fields = g.structseq_fieldnames(pair.function.func.returns)
                if fields:
                    structseqs[str(pair.function.func.name)] = (cpp.name(pair.function.func),
                                                                list(fields))
    return {"signatures": table, "structseqs": structseqs}


@functools.cache
def spellings() -> dict:
    return cached_generated("spellings", _generate)
