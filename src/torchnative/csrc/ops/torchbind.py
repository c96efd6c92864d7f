"""TorchBind custom classes (``torch::class_``): the registry upstream Python consults.

Upstream's C++ registers its own classes: the ones its operator schemas name (read off our
table of C++ operators) and ``aten::OpaqueObject``, which torch/_library/opaque_object.py looks
up at import. We register the same names, so lookups and schema parsing answer as upstream's do;
constructing or calling a script class refuses, since TorchScript objects are not implemented.
"""

from __future__ import annotations

import re

from ..core.refuse import TorchnativeNotImplementedError
from ..core.tables import c_enums


def _builtin_classes() -> set[tuple[str, str]]:
    found = {("aten", "OpaqueObject")}
    for op in c_enums()["cpp_ops"]:
        found.update(tuple(m.split(".")) for m in
                     re.findall(r"__torch__\.torch\.classes\.(\w+\.\w+)", op["schema"]))
    return found


REGISTERED = _builtin_classes()


class ScriptClass:
    """A handle on a registered TorchBind class (torch._C.ScriptClass)."""

    def __init__(self, qualified_name: str):
        self._qualified_name = qualified_name

    @property
    def __name__(self):
        return self._qualified_name.rsplit(".", 1)[-1]

    @property
    def qualified_name(self) -> str:
        return self._qualified_name

    def __call__(self, *args, **kwargs):
        raise TorchnativeNotImplementedError(f"torch.classes.{self._qualified_name}",
                                             "TorchBind/TorchScript objects are not implemented")

    def __repr__(self):
        return f"<torch.ScriptClass {self._qualified_name}>"


def get_custom_class_python_wrapper(ns: str, name: str) -> ScriptClass:
    if (ns, name) not in REGISTERED:
        raise RuntimeError(f"Tried to instantiate class '{ns}.{name}', but it does not exist! "
                           "Ensure that it is registered via torch::class_")
    return ScriptClass(f"__torch__.torch.classes.{ns}.{name}")


TORCH_C = {
    "torch._C.ScriptClass": ScriptClass,
    "torch._C._get_custom_class_python_wrapper": get_custom_class_python_wrapper,
}
