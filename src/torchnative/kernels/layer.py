"""Kernel layers: the repositories a mapping points at, the decorators that make a layer or a
function kernelizable, layer validation, and replacing one module's ``forward``."""

from __future__ import annotations

import inspect
import logging
from enum import Flag, auto
from inspect import Parameter, Signature
from pathlib import Path
from types import MethodType, ModuleType
from typing import Callable

from .load import get_kernel, get_local_kernel, load_kernel
from .lockfile import locked, read_locks
from .load import _caller_locks

logger = logging.getLogger(__name__)


class KernelizeFallback(Flag):
    """Cases in which ``kernelize`` keeps a layer's original forward instead of raising."""
    NONE = 0
    NO_LAYER = auto()
    NO_DEVICE = auto()
    NO_COMPATIBLE_PROPERTIES = auto()
    NO_COMPATIBLE_MODE = auto()
    CANNOT_LOAD = auto()

    DEFAULT = NO_LAYER | NO_DEVICE | NO_COMPATIBLE_PROPERTIES | NO_COMPATIBLE_MODE
    ALL = DEFAULT | CANNOT_LOAD


def _kernel_layer(repo, kernel: ModuleType):
    if getattr(kernel, "layers", None) is None:
        raise ValueError(f"Kernel repo {repo} does not define any layers.")
    layer = getattr(kernel.layers, repo.layer_name, None)
    if layer is None:
        raise ValueError(f"Layer `{repo.layer_name}` not found in kernel repo {repo}.")
    return layer


def _trust(t):
    return tuple(t) if isinstance(t, list) else t


class LayerRepository:
    """A layer in a kernel repository, by hub id and version or revision (resolved from the
    bundle)."""

    def __init__(self, repo_id: str, *, layer_name: str, revision: str | None = None,
                 version: int | None = None, trust_remote_code: bool | list[str] = False,
                 user_agent=None):
        if revision is not None and version is not None:
            raise ValueError("Either a revision or a version must be specified, not both.")
        if revision is None and version is None:
            raise ValueError("Either a revision or a version must be specified.")
        self._repo_id, self.layer_name = repo_id, layer_name
        self._revision, self._version = revision, version
        self._trust_remote_code = list(trust_remote_code) if isinstance(trust_remote_code, list) \
            else trust_remote_code
        self._user_agent = user_agent

    def load(self):
        return _kernel_layer(self, get_kernel(self._repo_id, revision=self._revision,
                                              version=self._version))

    def _key(self):
        return (self.layer_name, self._repo_id, self._revision, self._version,
                _trust(self._trust_remote_code))

    def __eq__(self, other):
        return isinstance(other, LayerRepository) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        rev = f"revision: {self._revision}" if self._revision else f"version: {self._version}"
        return f"`{self._repo_id}` ({rev}), layer `{self.layer_name}`"


class LocalLayerRepository:
    """A layer in a kernel repository directory on disk."""

    def __init__(self, repo_path: Path, *, layer_name: str):
        self._repo_path, self.layer_name = repo_path, layer_name

    def load(self):
        return _kernel_layer(self, get_local_kernel(self._repo_path))

    def __eq__(self, other):
        return (isinstance(other, LocalLayerRepository) and self.layer_name == other.layer_name
                and self._repo_path == other._repo_path)

    def __hash__(self):
        return hash((self.layer_name, self._repo_path))

    def __str__(self):
        return f"`{self._repo_path}` (layer `{self.layer_name}`)"


class LockedLayerRepository:
    """A layer in a kernel repository locked by a ``kernels.lock`` (the one given, or the
    caller's package's)."""

    def __init__(self, repo_id: str, *, lockfile: Path | None = None, layer_name: str,
                 trust_remote_code: bool | list[str] = False):
        self._repo_id, self._lockfile, self.layer_name = repo_id, lockfile, layer_name
        self._trust_remote_code = trust_remote_code
        entries = read_locks(lockfile) if lockfile is not None else _caller_locks(repo_id)
        self.lock = locked(entries, repo_id)

    def load(self):
        return _kernel_layer(self, load_kernel(self._repo_id, lockfile=self._lockfile))

    def _key(self):
        return (self.layer_name, self._repo_id, self.lock, _trust(self._trust_remote_code))

    def __eq__(self, other):
        return isinstance(other, LockedLayerRepository) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __str__(self):
        return f"`{self._repo_id}` (revision: {self.lock.commit}), layer `{self.layer_name}`"


def replace_kernel_forward_from_hub(cls, layer_name: str,
                                    condition: Callable | None = None) -> None:
    """Make ``cls`` kernelizable under ``layer_name`` (``condition(module)`` may skip
    instances)."""
    cls.kernel_layer_name = layer_name
    cls.kernel_condition = staticmethod(condition if condition is not None else lambda m: True)


def func_module(func: Callable):
    """An ``nn.Module`` class whose forward calls ``func``, with ``func``'s signature, so that
    a function can be validated and replaced as a layer."""
    from torch import nn

    class Func(nn.Module):
        can_torch_compile = getattr(func, "can_torch_compile", False)
        has_backward = getattr(func, "has_backward", True)

        def forward(self, *args, **kwargs):
            return func(*args, **kwargs)

    sig = inspect.signature(func)
    Func.forward.__signature__ = Signature(
        [Parameter("self", Parameter.POSITIONAL_OR_KEYWORD), *sig.parameters.values()],
        return_annotation=sig.return_annotation)
    return Func


def use_kernel_forward_from_hub(layer_name: str, condition: Callable | None = None):
    """Decorator: a class becomes kernelizable; a function becomes an instance of a
    kernelizable module (visible to ``kernelize`` once attached with ``use_kernelized_func``)."""

    def decorator(ty):
        if inspect.isfunction(ty):
            Func = func_module(ty)
            replace_kernel_forward_from_hub(Func, layer_name, condition)
            return Func()
        if inspect.isclass(ty):
            replace_kernel_forward_from_hub(ty, layer_name, condition)
            return ty
        raise TypeError("@use_kernel_forward_from_hub can only be applied to classes or functions")

    return decorator


def use_kernelized_func(*funcs: Callable):
    """Class decorator: attach kernel functions to each instance (not as submodules), so that
    ``kernelize`` finds them."""

    def decorator(cls):
        for fn in funcs:
            if not hasattr(fn, "kernel_layer_name"):
                raise ValueError(f"Function `{getattr(fn, '__name__', fn)}` is not decorated with "
                                 "@use_kernel_forward_from_hub and cannot be used with "
                                 "@use_kernelized_func")
        orig_init = cls.__init__

        def new_init(self, *args, **kwargs):
            orig_init(self, *args, **kwargs)
            hidden = self.__dict__.setdefault("_kernel_funcs", {})
            for fn in funcs:
                hidden[getattr(fn, "__name__", None) or fn.kernel_layer_name] = fn

        cls.__init__ = new_init
        return cls

    return decorator


def validate_layer(*, check_cls, cls, repo) -> None:
    """A kernel layer is stateless (no ``__init__``, no members beyond ``nn.Module``'s but
    ``can_torch_compile``/``has_backward``) and its forward takes the same parameters, of the
    same kinds, as the layer it replaces."""
    import torch.nn as nn

    if not (inspect.isclass(cls) and issubclass(cls, nn.Module)):
        raise TypeError(f"Layer `{getattr(cls, '__name__', cls)}` is not a Torch layer.")
    if cls.__init__ is not nn.Module.__init__:
        raise TypeError(f"{repo} must not override nn.Module constructor.")
    extra = {n for n, _ in inspect.getmembers(cls)} - {n for n, _ in inspect.getmembers(nn.Module)}
    if not extra <= {"can_torch_compile", "has_backward"}:
        raise TypeError(f"{repo} must not contain additional members compared to "
                        f"`{check_cls.__name__}`.")
    params = inspect.signature(cls.forward).parameters
    ref = inspect.signature(check_cls.forward).parameters
    if len(params) != len(ref):
        raise TypeError(f"Forward signature of {repo} does not match `{check_cls.__name__}`: "
                        "different number of arguments.")
    for p, r in zip(params.values(), ref.values()):
        if p.kind != r.kind:
            raise TypeError(f"Forward signature of {repo} does not match `{check_cls.__name__}`: "
                            f"different kind of arguments ({p} ({p.kind}) and {r} ({r.kind})")


def replace_forward(module, layer) -> None:
    module.forward = MethodType(layer.forward, module)
