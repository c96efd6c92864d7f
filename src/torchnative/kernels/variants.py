"""Build variants (``build/<variant>/``): their names, which fit a system, and which is best.

Names, as the contract spells them: ``torch213-cxx11-cpu-x86_64-linux`` (an arch build for one
torch minor version, C++ ABI tag optional), ``torch-stable-abi210-cu128-x86_64-linux`` (stable
ABI, fits that torch or newer), ``tvm-ffi01-...``, ``torch-cpu`` (noarch: pure Python for one
backend) and ``torch-universal`` (noarch for any backend). Preference: stable-ABI arch builds
(newest ABI first), torch arch builds (untagged before ABI-tagged), tvm-ffi builds, noarch for
the backend, universal; within a GPU backend the newest compatible toolkit first.
"""

from __future__ import annotations

import platform as _platform
import re
from dataclasses import dataclass

_GPU_BACKEND = re.compile(r"(cu|rocm|xpu|cann)(\d)(\d+)")
_SIMPLE_BACKENDS = ("cpu", "metal", "neuron", "tpu")
_BACKEND_NAME = {"cu": "cuda", "rocm": "rocm", "xpu": "xpu", "cann": "cann"}


@dataclass(frozen=True)
class Variant:
    name: str
    framework: str                 # "torch", "torch-stable-abi", "tvm-ffi" or "noarch"
    framework_version: tuple | None
    cxx11_abi: bool | None
    backend: str                   # "cpu", "cu128", "metal", ... ; for noarch "cpu"/"universal"/...
    cpu: str | None = None
    os: str | None = None

    @property
    def backend_name(self) -> str:
        m = _GPU_BACKEND.fullmatch(self.backend)
        return _BACKEND_NAME[m.group(1)] if m else self.backend

    @property
    def backend_version(self) -> tuple | None:
        m = _GPU_BACKEND.fullmatch(self.backend)
        return (int(m.group(2)), int(m.group(3))) if m else None


def _backend(s: str) -> str:
    if s in _SIMPLE_BACKENDS or _GPU_BACKEND.fullmatch(s):
        return s
    raise ValueError(f"Unknown backend variant string: {s!r}")


def _arch(parts: list[str], name: str) -> tuple[str, str, str]:
    if len(parts) != 3:
        raise ValueError(f"Invalid arch variant parts in {name!r}: {parts!r}")
    return _backend(parts[0]), parts[1], parts[2]


def parse_variant(name: str) -> Variant:
    parts = name.split("-")
    if name.startswith("torch-stable-abi"):
        m = re.fullmatch(r"abi(\d)(\d+)", parts[2])
        if not m:
            raise ValueError(f"Invalid Torch stable ABI variant string: {name!r}")
        b, c, o = _arch(parts[3:], name)
        return Variant(name, "torch-stable-abi", (int(m.group(1)), int(m.group(2))), None, b, c, o)
    if parts[0] == "torch":
        if len(parts) < 2:
            raise ValueError(f"Invalid noarch variant string: {name!r}")
        return Variant(name, "noarch", None, None, "-".join(parts[1:]))
    m = re.fullmatch(r"torch(\d)(\d+)", parts[0])
    if m:
        rest = parts[1:]
        abi = None
        if rest and rest[0] in ("cxx11", "cxx98"):
            abi, rest = rest[0] == "cxx11", rest[1:]
        b, c, o = _arch(rest, name)
        return Variant(name, "torch", (int(m.group(1)), int(m.group(2))), abi, b, c, o)
    if parts[0] == "tvm" and len(parts) >= 2:
        m = re.fullmatch(r"ffi(\d+?)(\d+)", parts[1])
        if m:
            b, c, o = _arch(parts[2:], name)
            return Variant(name, "tvm-ffi", (int(m.group(1)), int(m.group(2))), None, b, c, o)
    raise ValueError(f"Unknown framework in variant string: {name!r}")


@dataclass(frozen=True)
class Target:
    """The system a kernel must run on: what ``resolve`` checks a variant against."""
    torch_version: tuple | None      # (major, minor)
    cxx11_abi: bool | None
    backend: str                     # a variant backend string: "cpu", "cu128", "metal", ...
    cpu: str
    os: str
    tvm_ffi_version: tuple | None = None

    @property
    def name(self) -> str:
        abi = "" if self.cxx11_abi is None else ("-cxx11" if self.cxx11_abi else "-cxx98")
        tv = self.torch_version or (0, 0)
        return f"torch{tv[0]}{tv[1]}{abi}-{self.backend}-{self.cpu}-{self.os}"

    @staticmethod
    def parse(name: str) -> "Target":
        """A target spelled as an arch variant, e.g. ``torch213-cxx11-cpu-x86_64-linux``."""
        v = parse_variant(name)
        if v.framework != "torch":
            raise ValueError(f"A target is spelled as a torch arch variant, got {name!r}")
        return Target(v.framework_version, v.cxx11_abi, v.backend, v.cpu, v.os)

    @staticmethod
    def current(backend: str | None = None) -> "Target":
        """The running interpreter's system, as the contract detects it."""
        import torch

        cpu, os_ = _platform.machine(), _platform.system().lower()
        if os_ == "darwin":
            cpu = "aarch64" if cpu == "arm64" else cpu
        elif os_ == "windows":
            cpu = "x86_64" if cpu == "AMD64" else cpu
        major, minor = (int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
        abi = bool(torch.compiled_with_cxx11_abi()) if os_ == "linux" else None
        detected = "cpu"
        if torch.version.cuda is not None:
            detected = "cu" + "".join(torch.version.cuda.split(".")[:2])
        elif torch.version.hip is not None:
            detected = "rocm" + "".join(torch.version.hip.split("-")[0].split(".")[:2])
        if backend is not None and backend not in ("cpu", _backend_name(detected)):
            raise ValueError(f"Invalid backend '{backend}', system supported backends: "
                             f"{', '.join(sorted({'cpu', _backend_name(detected)}))}")
        return Target((major, minor), abi, "cpu" if backend == "cpu" else detected, cpu, os_)


def _backend_name(b: str) -> str:
    m = _GPU_BACKEND.fullmatch(b)
    return _BACKEND_NAME[m.group(1)] if m else b


def rejection(v: Variant, t: Target) -> str | None:
    """Why ``v`` does not fit ``t`` (None when it fits)."""
    if v.framework == "noarch":
        want = "npu" if _backend_name(t.backend) == "cann" else _backend_name(t.backend)
        if v.backend not in (want, "universal"):
            return (f"backend ({v.backend}) does not match system backend ({want}) "
                    "and is not universal")
        return None
    if v.cpu != t.cpu:
        return f"CPU ({v.cpu}) does not match system CPU ({t.cpu})"
    if v.os != t.os:
        return f"OS ({v.os}) does not match system OS ({t.os})"
    fv = ".".join(map(str, v.framework_version))
    tv = ".".join(map(str, t.torch_version)) if t.torch_version else None
    if v.framework == "torch":
        if v.framework_version != t.torch_version:
            return f"Torch version ({fv}) does not match environment Torch version ({tv})"
        if v.cxx11_abi is not None and v.cxx11_abi != t.cxx11_abi:
            return (f"Torch CXX11 ABI ({v.cxx11_abi}) does not match environment Torch CXX11 ABI "
                    f"({t.cxx11_abi})")
    elif v.framework == "torch-stable-abi":
        if t.torch_version is None or v.framework_version > t.torch_version:
            return f"Torch stable ABI version ({fv}) is too new for environment Torch version ({tv})"
    elif v.framework == "tvm-ffi" and v.framework_version != t.tvm_ffi_version:
        return f"tvm-ffi version ({fv}) does not match environment tvm-ffi version"
    tb = _GPU_BACKEND.fullmatch(t.backend)
    if v.backend_name == "cuda" and tb and tb.group(1) == "cu":
        sys_v = (int(tb.group(2)), int(tb.group(3)))
        if v.backend_version[0] != sys_v[0] or v.backend_version[1] > sys_v[1]:
            return (f"CUDA version ({'.'.join(map(str, v.backend_version))}) is not compatible "
                    f"with system CUDA version ({'.'.join(map(str, sys_v))})")
    elif v.backend != t.backend:
        return f"backend ({v.backend}) does not match selected backend ({t.backend})"
    return None


def _preference(v: Variant) -> tuple:
    if v.framework == "noarch":
        return (2, 0, 0, 0, 1 if v.backend == "universal" else 0)
    gpu = -v.backend_version[1] if v.backend_version else 0
    if v.framework == "torch-stable-abi":
        return (0, -v.framework_version[0], -v.framework_version[1], gpu)
    if v.framework == "torch":
        return (1, 0, 1 if v.cxx11_abi is not None else 0, gpu)
    return (1.5, 0, 0, gpu)


def resolve(variant_names, target: Target) -> tuple[list[str], list[tuple[str, str | None]]]:
    """(fitting variant names best first, trace of (name, rejection reason or None)).
    Names that do not parse as variants are left out, as the contract does."""
    parsed = []
    for n in variant_names:
        try:
            parsed.append(parse_variant(n))
        except ValueError:
            continue
    trace = [(v, rejection(v, target)) for v in parsed]
    trace.sort(key=lambda vr: (vr[1] is not None, _preference(vr[0])))
    return ([v.name for v, r in trace if r is None], [(v.name, r) for v, r in trace])


def trace_text(trace) -> str:
    return "\n".join(f"{n} compatible" if r is None else f"{n}: {r}" for n, r in trace)
