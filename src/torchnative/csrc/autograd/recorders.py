"""Straight-line recording functions, one per functional formula spec, as upstream generates a
VariableType kernel per operator.

``dispatch._record`` interprets a spec's tables on every call (the edge list, which saved values
each gradient needs, the outputs); for an operator that takes and returns plain tensors and
numbers the same steps are written out once as Python source: each argument a local, each
edge's liveness a flag, each saved value guarded by the flags of the gradients that use it, the
computed saved values (``m_sym_sizes(mat1)``, ...) inlined. The node, its saved values (in the
same order), its edges and its outputs' history come out as ``_record`` makes them; operators
with list arguments or outputs, in-place, out= and mutating operators keep ``_record``.
"""

from __future__ import annotations

import keyword

from ..core.tensor import TensorBase
from .generated_source import compiled
from .node import gradient_edge

_SAFE_KINDS = ("tensor", "optional")
_PARAMETERS = ("op", "args", "kwargs")  # the recording function's own


def eligible(plan, spec) -> bool:
    """Whether ``spec`` (the plan's own) can be written out: functional, formulas runnable, no
    list edge, no list output, argument names usable as locals."""
    if spec is None or plan.spec is not spec or not spec.available or spec.kind != "functional":
        return False
    if plan.ranges is None or any(kind not in _SAFE_KINDS for _, kind in spec.edges):
        return False
    returns = plan.op.schema.returns
    if any("[]" in str(r.type) or "List" in str(r.type) for r in returns):
        return False
    names = plan.names + plan.kwonly
    if any(not n.isidentifier() or keyword.iskeyword(n) or n.startswith("_r_") or
           n in _PARAMETERS for n in names):
        return False
    return all(i is not None for _, i, _u in spec.saved_outputs)


def build(plan, spec, steps: dict):
    """The recording function ``record(op, args, kwargs)`` of ``spec``, or None. ``steps``:
    the recording steps ``_record`` uses (dispatch.py's ``_below``, ``_save``, ...), by name."""
    if not eligible(plan, spec):
        return None

    names, kwonly = plan.names, plan.kwonly
    edge_names = [n for n, _ in spec.edges]
    flag = {n: f"_r_w{i}" for i, n in enumerate(edge_names)}
    n_returns = len(plan.op.schema.returns)
    lines = ["def record(op, args, kwargs):"]
    add = lines.append
    # arguments: positionally when no keyword was given (the common call), else bound by name
    add("    if kwargs:")
    add("        _r_v = _r_bind(args, kwargs)")
    for n in names + kwonly:
        add(f"        {n} = _r_v[{n!r}]")
    add("    else:")
    add("        _r_n = _r_len(args)")
    for i, n in enumerate(names):
        add(f"        {n} = args[{i}] if _r_n > {i} else _r_d[{n!r}]")
    for n in kwonly:
        add(f"        {n} = _r_d[{n!r}]")
    # next edges, in the formulas' argument order
    for i, n in enumerate(edge_names):
        add(f"    _r_e{i} = _r_edge({n}) if _r_isinstance({n}, _r_TB) else _r_NO_EDGE")
        add(f"    {flag[n]} = _r_e{i}[0] is not None")
    any_live = " or ".join(flag[n] for n in edge_names) or "False"
    check = f"_r_nondiff_check({', '.join(spec.nondiff)})" if spec.nondiff else None
    add(f"    if not ({any_live}):")
    add(f"        if not _r_any_view(_r_spec, {{{', '.join(f'{n!r}: {n}' for n in edge_names)}}}):")
    if check:
        add(f"            {check}")
    add("            return _r_below(op, args, kwargs)")
    if check:
        add(f"    {check}")
    add("    _r_saved = {}")
    raw_src = dict(spec.raw.saved_inputs)
    for name, plain, _code, users in spec.saved_inputs:
        indent = _guard(add, users, flag)
        src = plain if plain is not None else raw_src[name]
        if plain is None and "lambda" in src:
            src = f"_r_eval(_r_codes[{name!r}], _r_NS, _r_locals())"
        add(f"{indent}_r_s = ({src})")
        add(f"{indent}_r_saved[{name!r}] = _r_s if _r_type(_r_s) in _r_AS_IS else "
            "_r_save(_r_s, False)")
    add("    _r_result = _r_below(op, args, kwargs)")
    add(f"    _r_node = _r_cls([{', '.join(f'_r_e{i}' for i in range(len(edge_names)))}], "
        "_r_ranges, _r_saved)")
    add("    _r_node._spec = _r_spec")
    out_of = (lambda idx: "_r_result") if n_returns == 1 else \
        (lambda idx: f"_r_result[{idx}]")
    metas = []
    for k, idx in enumerate(spec.diff_outputs):
        add(f"    _r_o = {out_of(idx)}")
        add("    if _r_isinstance(_r_o, _r_TB):")
        add("        _r_dt = _r_o._dtype")
        add("        if _r_dt.is_floating_point or _r_dt.is_complex:")
        add("            _r_o._grad_fn = _r_node")
        add(f"            _r_o._output_nr = {k}")
        add("            _r_o._requires_grad = True")
        add(f"        _r_m{k} = (_r_o._size, _r_dt)")
        add("    else:")
        add(f"        _r_m{k} = None")
        metas.append(f"_r_m{k}")
    add(f"    _r_node._input_meta = ({''.join(m + ', ' for m in metas)})")
    if plan.view is not None:
        add(f"    _r_stamp({'(_r_result,)' if n_returns == 1 else '_r_result'}, "
            f"{'self' if 'self' in names + kwonly else 'None'}, _r_view)")
    for name, idx, users in spec.saved_outputs:
        indent = _guard(add, users, flag)
        add(f"{indent}_r_o = {out_of(idx)}")
        add(f"{indent}_r_saved[{name!r}] = _r_save(_r_o, _r_o is not None and "
            "_r_o._grad_fn is _r_node)")
    if spec.derived_outputs:
        outs = "(_r_result,)" if n_returns == 1 else "_r_result"
        add(f"    _r_named = _r_dict(_r_zip(_r_spec.output_names, {outs}))")
        for name, _code, users in spec.derived_outputs:
            indent = _guard(add, users, flag)
            add(f"{indent}_r_saved[{name!r}] = _r_save(_r_eval(_r_derived[{name!r}], _r_NS, "
                "_r_named), False)")
    add("    return _r_result")
    glb = dict(plan.ns)
    glb.update(
        _r_bind=plan.bind, _r_d=plan.defaults, _r_edge=gradient_edge, _r_isinstance=isinstance,
        _r_TB=TensorBase, _r_NO_EDGE=steps["no_edge"], _r_any_view=steps["any_view"],
        _r_spec=spec, _r_below=steps["below"], _r_AS_IS=steps["as_is"], _r_save=steps["save"],
        _r_cls=spec.node_cls, _r_ranges=plan.ranges, _r_stamp=steps["stamp_views"],
        _r_view=plan.view, _r_eval=eval, _r_NS=plan.ns, _r_locals=locals, _r_len=len,
        _r_type=type, _r_dict=dict, _r_zip=zip,
        _r_codes={n: c for n, _p, c, _u in spec.saved_inputs if c is not None},
        _r_derived={n: c for n, c, _u in spec.derived_outputs},
        _r_nondiff_check=_nondiff_checker(spec.nondiff, plan.fname))
    return compiled("\n".join(lines), f"recorder of {spec.key}", glb)["record"]


def _guard(add, users, flag) -> str:
    """Opens ``if <some gradient using a saved value will be computed>:`` (nothing where every
    gradient uses it); returns the indent of the lines under it."""
    if not users:
        return "    "
    live = [flag[u] for u in sorted(users) if u in flag]
    add(f"    if {' or '.join(live) if live else 'False'}:")
    return "        "


def _nondiff_checker(nondiff, fname):
    """Refuses, as ``_record`` does, an argument that cannot be differentiated but requires
    grad."""
    def check(*values):
        for name, v in zip(nondiff, values):
            if isinstance(v, TensorBase) and v._requires_grad:
                raise RuntimeError(f"The function '{fname}' is not differentiable with respect "
                                   f"to argument '{name}'. This input cannot have requires_grad "
                                   "True.")
    return check
