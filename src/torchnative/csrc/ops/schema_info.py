"""``torch._C._SchemaInfo``: what an operator's schema says about mutation, with argument values.

FakeTensorMode asks it whether a call writes into a constant. An argument is mutable when its
alias annotation writes (``Tensor(a!)``), with upstream's one special case: the batch-norm
family writes ``running_mean``/``running_var`` only when training, so those two count as mutable
unless a ``training``/``train``/``use_input_stats`` value given through ``add_argument_value``
says otherwise (the operators and arguments are the ones upstream 2.13.0 answers differently from
the annotations, found by asking it about every operator).
"""

from __future__ import annotations

from ..core.refuse import TorchnativeNotImplementedError

_TRAINING_OPS = frozenset(["aten::batch_norm", "aten::native_batch_norm", "aten::cudnn_batch_norm",
                           "aten::miopen_batch_norm", "aten::_batch_norm_impl_index",
                           "aten::instance_norm"])
_RUNNING = ("running_mean", "running_var")
_TRAINING_FLAGS = ("training", "train", "use_input_stats")


class SchemaInfo:
    def __init__(self, schema):
        self._schema = schema
        self._values: dict = {}

    def _names(self):
        return [a.name for a in self._schema.arguments]

    def has_argument(self, name: str) -> bool:
        return name in self._names()

    def add_argument_value(self, name: str, value) -> None:
        self._values[name] = value

    def add_argument_values(self, values: dict) -> None:
        self._values.update(values)

    def _training(self) -> bool:
        names = self._names()
        for flag in _TRAINING_FLAGS:
            if flag in names and (flag not in self._values or bool(self._values[flag])):
                return True
        return False

    def _arg_mutable(self, arg) -> bool:
        if self._schema.name in _TRAINING_OPS and arg.name in _RUNNING:
            return self._training()
        return bool(arg.alias_info is not None and arg.alias_info.is_write)

    def is_mutable(self, name: str | None = None) -> bool:
        if name is None:
            return any(self._arg_mutable(a) for a in self._schema.arguments)
        for a in self._schema.arguments:
            if a.name == name:
                return self._arg_mutable(a)
        raise RuntimeError(f"Schema has no argument named {name}")

    def may_alias(self, *args):
        raise TorchnativeNotImplementedError("torch._C._SchemaInfo.may_alias")

    def may_contain_alias(self, *args):
        raise TorchnativeNotImplementedError("torch._C._SchemaInfo.may_contain_alias")


SchemaInfo.__name__ = SchemaInfo.__qualname__ = "_SchemaInfo"
SchemaInfo.__module__ = "torch._C"

TORCH_C = {"torch._C._SchemaInfo": SchemaInfo}
