"""Function schemas and JIT types: ours against upstream torch 2.13.0, field by field.

Upstream runs once per module, in its own environment and process (``testing.upstream.run_json``);
it parses every schema of ``native_functions.yaml`` and every registered operator
(``torch._C._jit_get_all_schemas()``) and dumps what Python can see of it. This process imports
only ``torchnative.csrc`` modules (never torch) and runs the same dump code over our objects.
Every comparison collects all mismatches and asserts there are none.
"""

from __future__ import annotations

import importlib.util
import re
import types
from pathlib import Path

import pytest

from torchnative.csrc.ops import jit_types as jt
from torchnative.csrc.ops import schema as S
from torchnative.testing import upstream

pytestmark = pytest.mark.golden

OURS = types.SimpleNamespace(**{k.rpartition(".")[2]: v for k, v in S.TORCH_C.items()})


def native_function_schemas() -> list[str]:
    """Every ``func:`` of the vendored native_functions.yaml, with the aten namespace added."""
    root = Path(importlib.util.find_spec("torchgen").submodule_search_locations[0])
    text = (root / "packaged/ATen/native/native_functions.yaml").read_text()
    return ["aten::" + f for f in re.findall(r"^- func: (.*?)\s*$", text, re.M)]


# Runs on both sides with C = torch._C (upstream) or our namespace: what Python sees of a schema.
DUMP = r'''
def attempt(f):
    try:
        return f()
    except Exception as e:
        return "!" + type(e).__name__ + ": " + str(e)

def dump_type(t):
    return [repr(t), t.kind(), t.str(), t.annotation_str, type(t).__name__]

def dump_arg(a):
    ai = a.alias_info
    return [a.name, dump_type(a.type), dump_type(a.real_type), a.N, a.has_default_value(),
            repr(a.default_value), type(a.default_value).__name__, a.kwarg_only, a.is_out,
            a.is_write, None if ai is None else [ai.is_write, sorted(ai.before_set),
                                                 sorted(ai.after_set)]]

def dump_schema(text):
    try:
        s = C.parse_schema(text)
    except Exception as e:
        return "!" + type(e).__name__ + ": " + str(e)
    return attempt(lambda: [
        str(s), repr(s), s.name, s.overload_name, s.is_mutable, s._is_view_op(),
        attempt(lambda: isinstance(hash(s), int)), attempt(lambda: C.parse_schema(str(s)) == s),
        [dump_arg(a) for a in s.arguments], [dump_arg(r) for r in s.returns]])

def relations(texts):
    """Distinct types of the schemas (by str), then subtype/equality matrices and structure."""
    seen = {}
    for text in texts:
        try:
            s = C.parse_schema(text)
        except Exception:
            continue
        for a in s.arguments + s.returns:
            for t in (a.type, a.real_type):
                seen.setdefault(t.str() + "|" + t.kind(), t)
    keys = sorted(seen)
    ts = [seen[k] for k in keys]
    sub = ["".join("1" if a.isSubtypeOf(b) else "0" for b in ts) for a in ts]
    eq = ["".join("1" if a == b else "0" for b in ts) for a in ts]
    info = [[attempt(t.requires_grad), [repr(c) for c in t.containedTypes()],
             attempt(lambda: repr(t.getElementType())), attempt(lambda: [repr(e) for e in t.elements()]),
             attempt(lambda: [repr(t.getKeyType()), repr(t.getValueType())]),
             attempt(t.dim), attempt(t.sizes), attempt(t.scalarType)] for t in ts]
    return {"keys": keys, "sub": sub, "eq": eq, "info": info}

def compat(texts):
    """Backward/forward compatibility between the overloads of each operator."""
    by_name = {}
    for text in texts:
        try:
            s = C.parse_schema(text)
        except Exception:
            continue
        by_name.setdefault(s.name, []).append(s)
    out = []
    for name in sorted(by_name):
        group = by_name[name][:6]
        for a in group:
            for b in group:
                out.append([str(a), str(b), a.is_backward_compatible_with(b),
                            list(a.check_forward_compatible_with(b))])
    return out
'''

UPSTREAM = r"""
import importlib.util, json, random, re, torch
from pathlib import Path
C = torch._C
root = Path(importlib.util.find_spec("torchgen").submodule_search_locations[0])
text = (root / "packaged/ATen/native/native_functions.yaml").read_text()
YAML = ["aten::" + f for f in re.findall(r"^- func: (.*?)\s*$", text, re.M)]
texts = list(dict.fromkeys(YAML + [str(s) for s in C._jit_get_all_schemas()]))
""" + DUMP + r"""
classes = sorted(set(re.findall(r"__torch__\.torch\.classes\.\w+\.\w+", " ".join(texts))))
# mutants of real schemas (seeded): they exercise the lexer and every error path
random.seed(0)
pieces = list("()[]!?*|,.=-:>\"' \n#$\\0123456789abcxyzTjeE_\t") + [
    "->", "...", "Tensor", "int", "None", "True", "if", "is not", "(a!)", "[]", "=1", "SymInt",
    "float", "str", "  ", "é", "0x1", "1e5", "'a\\nb'", '="é\\351"', "=-", "=[1,", "=1.5j",
    ' str s="x"', "[3]", "(b -> *)", "Dict(str, Tensor)", "Future(int)", "(Tensor, int)", "\n  ",
    "=float32", "=long", "=Mean"]
fuzz = []
for _ in range(FUZZ):
    s = random.choice(texts)
    for _ in range(random.randint(1, 3)):
        p, op = random.randrange(len(s) + 1), random.random()
        if op < 0.4:
            s = s[:p] + s[p + random.randint(1, 4):]
        elif op < 0.8:
            s = s[:p] + random.choice(pieces) + s[p:]
        else:
            q = random.randrange(len(s) + 1)
            s = s[:p] + s[q:q + 5] + s[p:]
    fuzz.append(s)
dtypes = sorted({n for n, v in vars(torch).items() if isinstance(v, torch.dtype)})
dtype_defaults = {n: dump_schema(f"aten::f(ScalarType s={n}, ScalarType? t={n}) -> Tensor")
                  for n in dtypes + ["float", "long", "complex", "Mean", "strided", "contiguous_format"]}
print(json.dumps({"texts": texts, "schemas": [dump_schema(t) for t in texts],
                  "dtype_defaults": dtype_defaults, "fuzz": fuzz,
                  "fuzz_results": [dump_schema(t) for t in fuzz],
                  "relations": relations(texts), "compat": compat(texts),
                  "errors": [dump_schema(t) for t in ERRORS], "classes": classes}))
"""

# Invalid or unusual schemas: each must fail (or succeed) exactly as upstream's parser does.
ERRORS = [
    "aten::foo(Tensor if) -> Tensor", "aten::foo(Tensor x) -> Tensor extra", "aten::foo(Tensor x)",
    "aten::foo(Tensor x) ->", "aten::foo(Tensor x", "aten::foo(Tensor x, int y=1.5.3) -> Tensor",
    "aten::foo(Tensor x=1) -> Tensor", "aten::foo.default(Tensor x) -> Tensor",
    "aten::foo.__x(Tensor x) -> Tensor", "aten::foo(double x) -> Tensor", "mylib::foo(double x) -> Tensor",
    "mylib::foo(Tensor x, int y=1, Tensor z) -> Tensor", "aten::foo", "",
    "aten::foo(Tensor x, ..., int y) -> Tensor", "aten::foo(int x=1, ...) -> Tensor",
    "aten::foo(int x=abc) -> Tensor", "aten::foo(Tensor[] x=[1]) -> Tensor",
    "aten::foo(Tensor x) -> (Tensor, ..., Tensor)", "aten::foo(Tensor(a x) -> Tensor",
    "aten::foo(Tensor x) -> Tensor\n", "aten::foo(Tensor x)\n -> Tensor\n", "mylib::foo(t x) -> Tensor",
    "foo(Tensor x) -> Tensor", "aten:foo(Tensor x) -> Tensor", 'aten::foo(Tensor x, int y="a") -> Tensor',
    "aten::foo(str x=1) -> Tensor", "aten::foo(Tensor x, float y=1e) -> Tensor",
    "aten::foo(int x=0x10) -> Tensor", "aten::foo(int x=99999999999999999999) -> Tensor",
    "aten::foo(int x = 1) -> Tensor", "aten::foo(Tensor x) -> Tensor # comment",
    "aten::foo(Tensor x, ) -> Tensor", "aten::foo(*, Tensor x, *, Tensor y) -> Tensor",
    'aten::foo(Device d="cuda:1") -> Tensor', 'aten::foo(Device d="xyz") -> Tensor',
    'aten::foo(Device d="cuda:x") -> Tensor', "aten::foo(bool b=1) -> Tensor",
    "aten::foo(int x=True) -> Tensor", "aten::foo(float x=.5) -> Tensor", "aten::foo(float x=1E3) -> Tensor",
    "aten::foo(int[] x=[1,]) -> Tensor", "aten::foo(str s='a\\'b') -> Tensor", 'aten::foo(str s="""abc""") -> Tensor',
    "aten::foo(ScalarType s=bfloat16, ScalarType? t=int64, ScalarType u=double) -> Tensor",
    "aten::foo(int s=bfloat16) -> Tensor", "aten::foo(float x=inf) -> Tensor",
    "aten::foo(float[2] x=1) -> Tensor", "aten::foo(bool[2] x=True) -> Tensor", "aten::foo(str[] x=[]) -> Tensor",
    "aten::foo(int[]? x=[1]) -> Tensor", "aten::foo(float? x=1) -> Tensor", "aten::foo(complex x=1) -> Tensor",
    "aten::foo(float x=2j) -> Tensor", "aten::foo(float x=-0.0) -> Tensor", "aten::foo(float x=1e20) -> Tensor",
    "aten::foo(float x=0.1) -> Tensor", "aten::foo(complex x=-1.5j) -> Tensor", "aten::foo(Tensor?(a!) x) -> Tensor",
    "aten::foo(Tensor(a!)?[] x) -> ()", "prim::foo(...) -> ...", "aten::foo(Tensor x) -> ((Tensor, Tensor))",
    "aten::foo(Tensor(a|b|*) x) -> Tensor", "aten::foo(Tensor(*|a) x) -> Tensor", "aten::foo(Tensor! a, Tensor! b) -> Tensor",
    "aten::foo(Tensor(a|b -> b|c) x) -> Tensor", "aten::foo(int[0] x) -> Tensor", "a.b::foo(Tensor x) -> Tensor",
    "aten::foo.1(Tensor x) -> Tensor", "aten::foo(Tensor from, int is) -> Tensor", "aten::foo(Tensor x) -> Tensor $",
    "aten::foo(Tensor x)$", 'aten::foo(Tensor x, str s="abc) -> Tensor', "aten::foo(float[] x=[True]) -> Tensor",
    "aten::foo(int[] x=[1.5]) -> Tensor", "aten::foo(float x=1e999) -> Tensor", 'aten::foo(str s="a\\qb") -> Tensor',
    'aten::foo(str s="a\\101b\\t\\"") -> Tensor', "aten::foo(SymBool b=True) -> Tensor", "aten::foo(int[] x=None) -> Tensor",
    "aten::foo(int[] x=abc) -> Tensor", "  aten::foo(Tensor x) -> Tensor", "aten::foo(\n  Tensor x,\n  int y) -> Tensor",
    "aten::foo(__torch__.torch.classes.foo.Bar x) -> Tensor", 'aten::foo(str s="\\x41") -> Tensor',
    "aten::foo(str s='é\\n') -> Tensor", "aten::foo(Union(int, str, NoneType) u, Union(int, NoneType) v) -> Tensor",
    "aten::foo(Future(int) x, Await(Tensor) y, RRef(t) z) -> Future(Tensor)", "aten::foo(Dict(str, t)(a) self) -> ((str, t)[])",
    "aten::foo(Tensor x, *, Tensor(a!) out, Tensor(b!) out2) -> (Tensor(a!) o, Tensor(b!))",
    "aten::foo(Scalar s=1.0, Scalar t=1e2, float? u=1.) -> Tensor", "aten::foo(Generator? g, Tensor(a)[](b!) x) -> Tensor",
]


FUZZ = 3000  # mutated schemas


@pytest.fixture(scope="module")
def up():
    if not upstream.available():
        upstream.missing("upstream torch environment (.venv-upstream) is not installed")
    result = upstream.run_json(f"ERRORS = {ERRORS!r}\nFUZZ = {FUZZ}\n" + UPSTREAM, timeout=300)
    # the vendored yaml is upstream's, byte for byte: both sides start from the same schemas
    assert result["texts"][:len(native_function_schemas())] == native_function_schemas()
    return result


@pytest.fixture(scope="module")
def ours(up):
    """Our side of the same dump, with upstream's registered custom classes made known."""
    ns = {"C": OURS}
    exec(DUMP, ns)
    saved = set(S._CUSTOM_CLASSES)
    for qualname in up["classes"]:
        S.register_custom_class(qualname)
    try:
        texts = up["texts"]
        yield {"schemas": [ns["dump_schema"](t) for t in texts], "relations": ns["relations"](texts),
               "compat": ns["compat"](texts), "errors": [ns["dump_schema"](t) for t in ERRORS],
               "fuzz_results": [ns["dump_schema"](t) for t in up["fuzz"]],
               "dtype_defaults": {n: ns["dump_schema"](f"aten::f(ScalarType s={n}, ScalarType? t={n}) -> Tensor")
                                  for n in up["dtype_defaults"]}}
    finally:
        S._CUSTOM_CLASSES.clear()
        S._CUSTOM_CLASSES.update(saved)
        S._CACHE.clear()


def mismatches(texts, theirs, mine):
    return [(t, a, b) for t, a, b in zip(texts, theirs, mine) if a != b]


def assert_none(bad, what):
    assert not bad, f"{len(bad)} {what} mismatches, first ones:\n" + "\n".join(map(repr, bad[:10]))


# ---- golden: every schema upstream knows -----------------------------------------------------

def test_every_schema_field_by_field(up, ours):
    texts = up["texts"]
    # native_functions.yaml (2,584 funcs) and the registered operators (4,374), most printed alike
    assert len(texts) > 4400
    assert all(not isinstance(d, str) for d in up["schemas"]), "upstream failed to parse its own"
    bad = []
    for text, theirs, mine in zip(texts, up["schemas"], ours["schemas"]):
        if isinstance(mine, str) or theirs[:8] != mine[:8]:
            bad.append((text, theirs if isinstance(mine, str) else theirs[:8], mine if isinstance(mine, str) else mine[:8]))
            continue
        for kind, i in (("argument", 8), ("return", 9)):
            if len(theirs[i]) != len(mine[i]):
                bad.append((text, kind + " count", len(theirs[i]), len(mine[i])))
            for a, b in zip(theirs[i], mine[i]):
                if a != b:
                    bad.append((text, kind, a[0], [(x, y) for x, y in zip(a, b) if x != y]))
    assert_none(bad, "schema")


def test_type_relations(up, ours):
    theirs, mine = up["relations"], ours["relations"]
    assert theirs["keys"] == mine["keys"]
    keys = theirs["keys"]
    bad = [(k, which, [keys[j] for j, (x, y) in enumerate(zip(a, b)) if x != y])
           for which in ("sub", "eq") for k, a, b in zip(keys, theirs[which], mine[which]) if a != b]
    bad += mismatches(keys, theirs["info"], mine["info"])
    assert_none(bad, "type relation")


def test_compatibility_checks(up, ours):
    assert len(up["compat"]) == len(ours["compat"])
    assert_none([(a, b) for a, b in zip(up["compat"], ours["compat"]) if a != b], "compatibility")


def test_errors_and_corner_cases(up, ours):
    assert_none(mismatches(ERRORS, up["errors"], ours["errors"]), "error/corner case")


def test_fuzzed_schemas_parse_or_fail_alike(up, ours):
    """Random mutants of real schemas: same result, or same exception type and message."""
    assert sum(not isinstance(r, str) for r in up["fuzz_results"]) > FUZZ // 10  # some still parse
    assert_none(mismatches(up["fuzz"], up["fuzz_results"], ours["fuzz_results"]), "fuzzed schema")


def test_dtype_names_as_defaults(up, ours):
    """``ScalarType s=bfloat16``: every dtype name upstream's torch has (getStringToDtypeMap)."""
    names = list(up["dtype_defaults"])
    assert len(names) > 50
    assert_none(mismatches(names, [up["dtype_defaults"][n] for n in names],
                           [ours["dtype_defaults"][n] for n in names]), "dtype default")


# ---- unit tests ----------------------------------------------------------------------------

def test_native_functions_parse_once_and_are_cached_by_string(monkeypatch):
    """Every schema parses, and a second parse of the same string is the cached object (how long
    parsing takes is a benchmark's question, not a test's: these machines are shared). The
    process's own cache is left as it was."""
    schemas = native_function_schemas()
    monkeypatch.setattr(S, "_CACHE", {})
    first = [S.parse_schema(s) for s in schemas]
    assert all(S.parse_schema(s) is f for s, f in zip(schemas, first))


def test_errors_are_runtime_errors_naming_the_place():
    with pytest.raises(RuntimeError, match=r"unknown type specifier.*\n.*\n\s+~~~~~~~ <--- HERE"):
        S.parse_schema("mylib::foo(Dimname x) -> Tensor")
    with pytest.raises(RuntimeError, match="expected ident but found 'eof'"):
        S.parse_schema("mylib::foo(Tensor x) ->")
    with pytest.raises(RuntimeError, match="only the operator name was given"):
        S.parse_schema("mylib::foo.overload")
    with pytest.raises(RuntimeError, match="Use `float` instead of `double`"):
        S.parse_schema("mylib::foo(double x) -> Tensor", allow_typevars=False)
    with pytest.raises(RuntimeError, match="Unknown custom class type ns.Cls"):
        S.parse_schema("mylib::foo(__torch__.torch.classes.ns.Cls x) -> Tensor")


def test_schema_objects_behave_like_upstreams():
    s = S.parse_schema("mylib::foo.out(Tensor self, int[2] k=1, *, ScalarType? dtype=None, "
                       "Tensor(a!) out) -> Tensor(a!)")
    assert (s.name, s.overload_name, s.is_mutable, s._is_view_op()) == ("mylib::foo", "out", True, False)
    assert not hasattr(s, "is_vararg")  # upstream does not expose it (HopSchema sets its own)
    assert s.arguments is not s.arguments and s.arguments[0] is s.arguments[0]
    k, dtype, out = s.arguments[1:]
    assert (k.N, k.default_value, str(k.type)) == (2, [1, 1], "List[int]")
    assert (str(dtype.type), str(dtype.real_type), dtype.kwarg_only) == ("Optional[int]", "Optional[ScalarType]", True)
    assert out.is_out and out.is_write and out.alias_info.before_set == {"a"}
    with pytest.raises(TypeError):
        _ = s == "not a schema"
    with pytest.raises(RuntimeError, match="unhashable type: 'List\\[int\\]'"):
        hash(s)
    # constructible from Python, as torch/_higher_order_ops/schema.py does
    ai = S._AliasInfo(True, {"alias::a0"}, {"alias::a0"})
    arg = S.Argument("x", jt.TensorType.get(), None, None, True, ai)
    ret = S.Argument("", jt.TensorType.get(), None, None, False, None)

    class HopSchema(S.FunctionSchema):
        def __init__(self, *a):
            self.is_vararg = a[4]
            super().__init__(*a)

    h = HopSchema("myns::hop", "", [arg], [ret], False, False)
    assert str(h) == "myns::hop(*, Tensor(a0!) x) -> Tensor" and h.is_vararg is False and h.is_mutable
    assert h == S.parse_schema(str(h)) and hash(h) == hash(S.parse_schema(str(h)))
    with pytest.raises(RuntimeError, match="must have a namespace"):
        S._AliasInfo(True, {"a0"}, set())


def test_types_behave_like_upstreams():
    T, I = jt.TensorType.get(), jt.IntType.get()
    assert jt.IntType.get() is I and repr(jt.ListType(I)) == "List[int]"
    assert jt.ListType(I).str() == "int[]" and jt.FutureType(T).str() == "Future[Tensor]"
    assert jt.OptionalType(jt.OptionalType(I)).getElementType() is I
    assert jt.UnionType([I, jt.NoneType.get()]) == jt.OptionalType(I)
    assert repr(jt.UnionType([I, jt.FloatType.get(), I])) == "Union[float, int]"
    assert T.isSubtypeOf(jt.OptionalType.ofTensor()) and I.isSubtypeOf(jt.NumberType.get())
    assert not jt.ListType(I).isSubtypeOf(jt.ListType(jt.NumberType.get()))
    with pytest.raises(TypeError, match="No constructor defined"):
        jt.IntType()
    with pytest.raises(TypeError, match="unhashable"):
        hash(I)
    with pytest.raises(RuntimeError, match="Can not create ListType with None type"):
        jt.ListType(None)
    assert isinstance(T.getInferred(), jt.TensorType) and T.dim() is None and T.requires_grad()
    assert jt.TensorType.get().with_sizes([2, 3]).str() == "Tensor(2, 3)"


def test_device_default_is_a_device():
    from torchnative.csrc.core.device import device
    d = S.parse_schema('mylib::foo(Device d="cuda:1") -> Tensor').arguments[0].default_value
    assert isinstance(d, device) and str(d) == "cuda:1"


def test_opaque_types():
    assert not S._is_opaque_type_registered("mylib.Thing")
    S._register_opaque_type("mylib.Thing")
    try:
        s = S.parse_schema("mylib::foo(mylib.Thing x, mylib.Thing[] y) -> mylib.Thing")
        assert str(s) == "mylib::foo(PyObject x, PyObject[] y) -> PyObject"
        assert s.arguments[0].type.kind() == "PyObjectType"
        with pytest.raises(RuntimeError, match="already registered"):
            S._register_opaque_type("mylib.Thing")
    finally:
        S._unregister_opaque_type("mylib.Thing")
    assert S.parse_schema("mylib::foo(mylib.Thing x) -> Tensor").arguments[0].type.kind() == "VarType"
    with pytest.raises(RuntimeError, match="unknown type specifier(.|\n)*\n           ~~~~~ <"):
        S.parse_schema("mylib::foo(mylib.Thing x) -> Tensor", allow_typevars=False)


def test_does_not_import_torch():
    import subprocess
    import sys
    code = "import sys, torchnative.csrc.ops.schema; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
