"""torch.return_types: the named tuples (C structseqs upstream) that multi-output operators'
Python spellings return, e.g. ``torch.max(x, dim=1)`` -> ``torch.return_types.max``.
Names and fields come from upstream's binding generator (spellings_table)."""

from __future__ import annotations

import operator

from .spellings_table import spellings


def _structseq(name: str, fields: list[str]) -> type:
    def __new__(cls, sequence, dict=None):
        seq = tuple(sequence)
        if len(seq) != len(fields):
            raise TypeError(f"torch.return_types.{name}() takes a {len(fields)}-sequence "
                            f"({len(seq)}-sequence given)")
        return tuple.__new__(cls, seq)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    def __reduce__(self):
        return (type(self), (tuple(self), {}))

    body = {"__new__": __new__, "__repr__": __repr__, "__reduce__": __reduce__,
            "__slots__": (), "__module__": "torch.return_types", "__qualname__": name,
            "__match_args__": tuple(fields),
            "n_fields": len(fields), "n_sequence_fields": len(fields), "n_unnamed_fields": 0,
            "_torchnative_fields": tuple(fields)}
    for i, f in enumerate(fields):
        body[f] = property(operator.itemgetter(i))
    return type(name, (tuple,), body)


def _build() -> tuple[dict, dict]:
    classes: dict[str, type] = {}
    by_overload: dict[str, type] = {}
    for overload, (name, fields) in spellings()["structseqs"].items():
        cls = classes.get(name)
        if cls is None:
            cls = classes[name] = _structseq(name, fields)
        by_overload[overload] = cls
    return classes, by_overload


CLASSES, BY_OVERLOAD = _build()

TORCH_C = {f"torch._C._return_types.{name}": cls for name, cls in CLASSES.items()}
