"""Straight-line backward functions, one per functional formula spec, as upstream generates a
node's ``apply`` per operator.

``FormulaNode._run`` interprets a spec on every call: which next edges are live, each formula's
input mask, an environment dict of the saved values and gradients, and ``eval`` of each formula.
For a spec without list arguments the same steps are written out once: each edge's liveness a
flag, the saved values unpacked into locals (all of them, in saving order, before the first
formula that runs, as the interpreter does), each formula's source inlined under its flags.
"""

from __future__ import annotations

from .generated_source import compiled
from .graph_task import TLS as _TASK
from .node import SavedVariable

_MISSING = object()


def build(spec, ns: dict, formula_source):
    """``run(node, grads)`` for ``spec``, or None where the interpreter keeps it (a list
    argument: its nodes' edges are laid out per call). ``ns``: the formulas' namespace;
    ``formula_source(src, env)``: a formula's source as it is compiled (generated.py's)."""
    if not spec.available or spec.kind != "functional" or \
            any(kind == "list" for _, kind in spec.edges):
        return None
    # every node of such a spec has one next edge per formula argument, in the edges' order
    index = {name: i for i, (name, _) in enumerate(spec.edges)}
    if len(index) != len(spec.edges) or any(v not in index for f in spec.formulas
                                            for v in f.var_names):
        return None
    saved_names = [n for n, *_ in spec.saved_inputs] + [n for n, *_ in spec.saved_outputs] + \
        [n for n, *_ in spec.derived_outputs]
    env = set(saved_names) | {"grad", "grads", "grad_input_mask", "retain_variables"} | \
        {name for _, name in spec.grad_names}
    names = saved_names + [name for _, name in spec.grad_names]
    if len(set(names)) != len(names) or any(not n.isidentifier() or n.startswith("_r_") or
                                            n in ("node", "grads") for n in names):
        return None  # (the function's own parameters: a saved value must not replace them)
    n_edges = len(spec.edges)
    lines = ["def run(node, grads):"]
    add = lines.append
    add("    for _r_g in grads:")
    add("        if _r_g is not None:")
    add("            break")
    add("    else:")
    add(f"        return [None] * {n_edges}")
    add("    _r_next = node._next")
    add("    _r_needed = _r_TASK.needed")
    for i in range(n_edges):
        add(f"    _r_n{i} = _r_next[{i}][0]")
    add("    if _r_needed is None:")
    for i in range(n_edges):
        add(f"        _r_l{i} = _r_n{i} is not None")
    add("    else:")
    for i in range(n_edges):
        add(f"        _r_l{i} = _r_n{i} is not None and _r_n{i} in _r_needed")
    add(f"    _r_out = [None] * {n_edges}")
    flags = [[f"_r_l{index[v]}" for v in f.var_names] for f in spec.formulas]
    add(f"    if not ({' or '.join(f for fl in flags for f in fl) or 'False'}):")
    add("        return _r_out")
    # the environment: saved values in saving order, then the gradients
    add("    _r_saved = node._saved")
    for n in saved_names:
        add(f"    _r_v = _r_saved.get({n!r}, _r_MISSING)")
        add("    if _r_v is not _r_MISSING:")
        add("        _r_t = _r_type(_r_v)")
        add(f"        {n} = _r_v.unpack(node) if _r_t is _r_SV else node._unpack(_r_v) "
            "if _r_t is _r_list else _r_v")
    add("    grad = grads[0] if grads else None")
    add("    _r_count = _r_len(grads)")
    for k, name in spec.grad_names:
        add(f"    {name} = grads[{k}] if _r_count > {k} else None")
    add("    retain_variables = True")
    for f, raw, fl in zip(spec.formulas, spec.raw.formulas, flags):
        add(f"    if {' or '.join(fl)}:")
        add(f"        grad_input_mask = [{', '.join(fl)}]")
        src = formula_source(raw.source, env)
        add(f"        _r_r = ({src})")
        if len(f.var_names) == 1:
            add(f"        _r_out[{index[f.var_names[0]]}] = _r_r")
        else:
            at = tuple(index[v] for v in f.var_names)
            add(f"        for _r_i, _r_val, _r_m in _r_zip({at!r}, _r_r, grad_input_mask):")
            add("            if _r_m:")
            add("                _r_out[_r_i] = _r_val")
    add("    return _r_out")
    glb = dict(ns)
    glb.update(_r_TASK=_TASK, _r_MISSING=_MISSING, _r_type=type, _r_SV=SavedVariable,
               _r_list=list, _r_len=len, _r_zip=zip)
    return compiled("\n".join(lines), f"backward of {spec.key}", glb)["run"]
