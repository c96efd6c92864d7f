"""Record which torch._C names upstream Python reads and calls, on the real torch 2.13.0.

Run under upstream's interpreter (.venv-upstream). The real compiled ``torch._C`` is wrapped in a
recording proxy before ``torch`` binds it; then the workload (import torch, the listed
subpackages, transformers' model classes) runs. Output (JSON): for each _C (sub)module, the names
read, the names read by ``hasattr``/``getattr(.., default)`` probes, the names taken only by
``from torch._C import *``, and the callables called. It drives what our ``_C`` must define:
a name upstream reads must exist; a called one must behave.

Usage: .venv-upstream/bin/python tools/trace_c_surface.py OUT.json [TABLE.json]

TABLE.json (committed as src/torchnative/csrc/surface/import_surface.json) keeps what our _C needs: every
name read or star-imported (not those only probed with hasattr, which must stay absent unless we
implement them), with its kind, minus the availability switches of subsystems we do not build.
"""

from __future__ import annotations

import importlib.machinery
import json
import linecache
import sys
import types
from collections import defaultdict

read: dict[str, set] = defaultdict(set)
probed: dict[str, set] = defaultdict(set)
starred: dict[str, set] = defaultdict(set)
called: dict[str, set] = defaultdict(set)
missing: dict[str, set] = defaultdict(set)


def _caller_line(depth: int) -> str:
    f = sys._getframe(depth)
    return linecache.getline(f.f_code.co_filename, f.f_lineno)


def _wrap_callable(modname: str, name: str, fn):
    def recorded(*a, **k):
        called[modname].add(name)
        a = [getattr(x, "__wrapped_real__", x) for x in a]
        try:
            return fn(*a, **k)
        finally:
            proxy_new_submodules()  # init calls (e.g. _autograd_init) register submodules

    recorded.__name__ = getattr(fn, "__name__", name)
    recorded.__qualname__ = getattr(fn, "__qualname__", name)
    recorded.__doc__ = getattr(fn, "__doc__", None)
    recorded.__wrapped_real__ = fn
    return recorded


class Proxy(types.ModuleType):
    def __init__(self, real: types.ModuleType, modname: str):
        super().__init__(real.__name__)
        object.__setattr__(self, "_real", real)
        object.__setattr__(self, "_modname", modname)
        object.__setattr__(self, "_cache", {})

    def __getattribute__(self, name):
        if name in ("_real", "_modname", "_cache", "__class__"):
            return object.__getattribute__(self, name)
        if name == "__dict__":  # upstream writes dummy types into torch._C.__dict__
            return object.__getattribute__(self, "_real").__dict__
        real = object.__getattribute__(self, "_real")
        modname = object.__getattribute__(self, "_modname")
        if name == "__all__":
            return [n for n in dir(real) if not n.startswith("_")]
        line = _caller_line(2)
        if name.startswith("__") and name.endswith("__"):
            return getattr(real, name)
        if "import *" in line:
            starred[modname].add(name)
        elif "hasattr(" in line or ("getattr(" in line and line.count(",") >= 2):
            probed[modname].add(name)
        else:
            read[modname].add(name)
        try:
            value = getattr(real, name)
        except AttributeError:
                        # C++ init code adds some submodules to the proxy's own dict (it imports torch._C)
            value = object.__getattribute__(self, "__dict__").get(name)
            if value is None:
                missing[modname].add(name)
                raise
        cache = object.__getattribute__(self, "_cache")
        if name in cache:
            return cache[name]
        if isinstance(value, types.ModuleType) and value.__name__.startswith("torch._C"):
            value = Proxy(value, f"{modname}.{name}")
        elif isinstance(value, (types.BuiltinFunctionType, types.FunctionType)):
            value = _wrap_callable(modname, name, value)
        cache[name] = value
        return value

    def __setattr__(self, name, value):
        setattr(object.__getattribute__(self, "_real"), name, value)

    def __dir__(self):
        return dir(object.__getattribute__(self, "_real"))


def proxy_new_submodules() -> None:
    """Submodules C++ registers in sys.modules are imported by name, not read as attributes."""
    for key in [k for k in sys.modules if k.startswith("torch._C.")]:
        if not isinstance(sys.modules[key], Proxy):
            sys.modules[key] = Proxy(sys.modules[key], key)


class Finder:
    def find_spec(self, name, path, target=None):
        if name != "torch._C":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        orig = spec.loader

        class Loader:
            def create_module(self, spec):
                return orig.create_module(spec)

            def exec_module(self, module):
                orig.exec_module(module)
                sys.modules[name] = Proxy(module, "torch._C")
                proxy_new_submodules()

        spec.loader = Loader()
        return spec


def kind_of(value) -> str:
    value = getattr(value, "__wrapped_real__", value)
    if isinstance(value, Proxy):
        return "module"
    if isinstance(value, types.ModuleType):
        return "module"
    if isinstance(value, type):
        return "class"
    if callable(value):
        return "function"
    if isinstance(value, (bool, int, float, str, type(None))):
        return "constant:" + repr(value)
    return "object:" + type(value).__name__


def describe() -> dict:
    """The kind of every name the workload touched, read off the real module."""
    out = {}
    for d in (read, probed, starred):
        for modname, names in d.items():
            mod = sys.modules["torch"]
            for part in modname.split(".")[1:]:
                mod = getattr(mod, part)
            for n in names:
                if n in missing.get(modname, ()):
                    continue
                try:
                    out[f"{modname}.{n}"] = kind_of(getattr(mod, n))
                except AttributeError:
                    out[f"{modname}.{n}"] = "missing-later"
    return dict(sorted(out.items()))


WORKLOAD = [
    "torch", "torch.nn", "torch.nn.functional", "torch.optim", "torch.utils.data", "torch.fx",
    "torch.distributions", "torch.utils.checkpoint", "torch._decomp", "torch._refs",
    "torch._meta_registrations", "torch.testing", "transformers",
]


# hasattr switches: present means "this subsystem is built". Distributed is switched on only when
# our c10d exists; until then these and everything under them stay absent.
NOT_BUILT = ("torch._C._c10d_init", "torch._C._rpc_init", "torch._C._dist_autograd_init",
             "torch._C._distributed")


def _resolve(qual: str):
    obj = sys.modules["torch"]
    for part in qual.split(".")[1:]:
        obj = getattr(obj, part)
    return obj


def members(qual: str) -> list[str]:
    """Names a class defines itself (its methods and properties), read off the real class."""
    obj = _resolve(qual)
    return sorted(n for n in vars(obj) if not (n.startswith("__") and n.endswith("__"))
                  and not n.startswith("_pybind11"))


def table(result: dict) -> dict:
    out: dict[str, dict] = defaultdict(dict)
    wanted = {f"{m}.{n}" for kind in ("read", "starred") for m, ns in result[kind].items() for n in ns}
    for qual, kind in result["kinds"].items():
        if qual not in wanted or qual.startswith(NOT_BUILT) or kind == "missing-later":
            continue
        mod, _, name = qual.rpartition(".")
        if kind == "class":
            # pybind11-bound classes have pybind11's metaclass, plain C types have ``type``;
            # upstream Python derives metaclasses from them, so the difference matters.
            meta = type(_resolve(qual)).__name__
            kind = {"kind": "class", "members": members(qual), "pybind": meta != "type"}
        out[mod][name] = kind
    return {m: dict(sorted(v.items())) for m, v in sorted(out.items())}


def main(out: str, table_out: str | None = None) -> None:
    sys.meta_path.insert(0, Finder())
    for mod in WORKLOAD:
        __import__(mod)
    from transformers import (AutoModelForCausalLM, AutoTokenizer, BertModel,  # noqa: F401
                              GPT2LMHeadModel, LlamaForCausalLM)
    result = {"kinds": describe()}
    result |= {
        kind: {m: sorted(v) for m, v in sorted(d.items())}
        for kind, d in (("read", read), ("probed", probed), ("starred", starred),
                        ("called", called), ("missing", missing))
    }
    with open(out, "w") as f:
        json.dump(result, f, indent=1)
    for kind, d in result.items():
        print(kind, sum(len(v) for v in d.values()))
    if table_out:
        with open(table_out, "w") as f:
            json.dump(table(result), f, indent=0)


if __name__ == "__main__":
    main(*sys.argv[1:])
