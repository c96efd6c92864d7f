"""torch.jit.CompilationUnit cases, run once on each torch; prints one JSON document.

Source text compiled with ``CompilationUnit(src)`` and ``define``: calls (positional, keyword,
defaults, containers, Optional), functions calling each other in the unit, names resolved through
the caller's frame and through an explicit resolution callback, names, qualified names, schemas,
and the call contract's errors. Then the JIT decomposition registry as forward AD uses it: a
scripted decomposition registered with ``torch.jit._register_decomposition`` is what computes the
tangent of an operator without a forward formula (a wrong one registered gives a wrong tangent)."""

import json
import math  # noqa: F401  (the compiled source names it)
from typing import Dict, List, Optional  # noqa: F401  (the compiled source names them)

import torch
import torch.nn.functional as F

SRC = '''
def f(x: torch.Tensor, n: int = 2) -> torch.Tensor:
    return g(x) * n + math.pi

def g(x: torch.Tensor) -> torch.Tensor:
    return x.sin()

def h(xs: List[int], d: Dict[str, float], o: Optional[torch.Tensor] = None) -> int:
    return len(xs) + len(d) + (0 if o is None else 1)
'''


def err(f):
    try:
        return ["ok", repr(f())]
    except Exception as e:
        return [type(e).__name__, str(e)]


def vals(t):
    return [float(v) for v in t.detach().double().reshape(-1)]


out = {"values": {}, "facts": {}, "errors": {}}
cu = torch.jit.CompilationUnit(SRC)
for dt in (torch.float32, torch.float64):
    x = torch.linspace(-1, 1, 5, dtype=dt)
    v = {"f": cu.f(x), "f_keywords": cu.f(x=x, n=4), "find_function": cu.find_function("g")(x)}
    for k, t in v.items():
        out["values"].setdefault(k, {})[str(dt)] = vals(t)

x = torch.linspace(-1, 1, 5)
facts = out["facts"]
facts["containers"] = cu.h([1, 2], {"a": 1.0}, x)
facts["names"] = sorted(fn.name for fn in cu.get_functions())
facts["qualified_names"] = sorted(fn.qualified_name for fn in cu.get_functions())
facts["schemas"] = sorted(str(fn.schema) for fn in cu.get_functions())
facts["find_missing"] = repr(cu.find_function("nope"))
facts["types"] = [type(cu).__name__, type(cu).__module__, type(cu.f).__name__,
                  type(cu.f).__module__, isinstance(cu.f.graph, torch._C.Graph)]
cu2 = torch.jit.CompilationUnit()
cu2.define("def k(a: int, b: int) -> int:\n    return a * b + 1\n")
facts["define_later"] = [cu2.k(3, 4), [fn.name for fn in cu2.get_functions()]]


def local_scope():
    def offset(a: int) -> int:
        return a * 10
    return torch.jit.CompilationUnit("def m(a: int) -> int:\n    return a + offset(a)\n").m(2)


facts["caller_frame"] = local_scope()


def q(a: int) -> int:
    return a - 100


cu3 = torch.jit.CompilationUnit()
cu3.define("def r(a: int) -> int:\n    return a + q(a)\n", rcb=lambda n: {"q": q}.get(n))
facts["resolution_callback"] = cu3.r(1)

e = out["errors"]
e["missing_attribute"] = err(lambda: cu.nope)
e["wrong_type"] = err(lambda: cu.f(x, 2.5))
e["too_many"] = err(lambda: cu.g(x, x))
e["missing_argument"] = err(lambda: cu.f())
e["unknown_keyword"] = err(lambda: cu.g(x, y=1))
e["list_of_str"] = err(lambda: cu.h(["a"], {}))
e["register_packet"] = err(lambda: torch.jit._register_decomposition(
    torch.ops.aten.trace, cu.g.graph))

# the registry forward AD consults: _softmax_backward_data has no forward formula; its tangent (in
# the Hessian-vector product of a softmax) comes from the decomposition registered for it. One
# registered before torch._decomp.decompositions_for_jvp loads stays (a schema's first
# registration is the one that runs), so softmax's backward with its sign flipped gives the
# flipped tangent; test_forward_ad.py checks the right one's
import sys  # noqa: E402

from torch.func import grad, jvp  # noqa: E402

facts["jvp_decompositions_loaded_before"] = "torch._decomp.decompositions_for_jvp" in sys.modules
negated = torch.jit.CompilationUnit(
    "def negated(grad_output: Tensor, output: Tensor, dim: int, input_dtype: int):\n"
    "    return -(output * (grad_output - (grad_output * output).sum(dim, keepdim=True)))\n"
).negated
torch.jit._register_decomposition(torch.ops.aten._softmax_backward_data.default, negated.graph)
import torch._decomp.decompositions_for_jvp  # noqa: E402,F401  (registers the right one after it)

z = torch.linspace(-1, 1, 6, dtype=torch.float64)
zt = torch.linspace(1, -0.5, 6, dtype=torch.float64)
w = z.sin()
hvp = jvp(grad(lambda a: (F.softmax(a, 0) * w).sum()), (z,), (zt,))[1]
# softmax's Hessian-vector product, by hand: the flipped decomposition gives its negation
p = F.softmax(z, 0)
pt = p * (zt - (p * zt).sum())
by_hand = pt * (w - (p * w).sum()) - p * (pt * w).sum()
facts["flipped_decomposition_used"] = bool(torch.allclose(hvp, -by_hand))
print(json.dumps(out))
