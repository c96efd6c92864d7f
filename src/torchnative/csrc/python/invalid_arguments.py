"""The message of a call no signature of a function accepts, as upstream's
``torch::format_invalid_args`` writes it (torch/csrc/utils/invalid_arguments.cpp).

Upstream re-reads each signature from its printed form, ``(Tensor other, *, Number alpha = 1)``,
with a deliberately simple parser: the text is split at ", ", a piece's last word is its name and
the rest its type, so ``*`` counts as an argument and a defaulted ``Number alpha = 1`` has the
type ``Number alpha =`` and the name ``1``. A type matches an object when it names the object's
type (``float`` takes ints too, ``int`` takes ints); the argument count, the keyword check and the
``!``-marked misfits all follow from that reading, and so does this module, quirks included:
they decide the text users see. Without a terminal the marks are ``!``; colours are not drawn.
"""

from __future__ import annotations

from ..core.typename import typename


class _Option:
    __slots__ = ("arguments", "printable")

    def __init__(self, text: str):
        self.printable = text
        self.arguments = []  # (name, accepted type names)
        for piece in text[1:-1].split(", "):
            cut = piece.rfind(" ")
            type_name, name = piece[:max(cut, 0)] if cut >= 0 else piece, piece[cut + 1:]
            if type_name == "float":
                accepted = ("float", "int")
            elif type_name == "int":
                accepted = ("int",)
            else:
                accepted = (type_name,)
            self.arguments.append((name, accepted))

    def count_matches(self, args, kwargs) -> bool:
        return len(args) + len(kwargs) == len(self.arguments)

    def unmatched_keywords(self, kwargs) -> list:
        start = max(len(self.arguments) - len(kwargs), 0)
        names = {name for name, _ in self.arguments[start:]}
        return [k for k in kwargs if k not in names]

    def marked(self, args, kwargs) -> str:
        """The arguments' types, each misfit between ``!`` marks (a keyword argument read
        under the name of the argument at its place, as upstream reads it)."""
        parts = []
        for i in range(len(args) + len(kwargs)):
            is_kwarg = i >= len(args)
            name, accepted = self.arguments[i] if i < len(self.arguments) else (None, ())
            obj = kwargs[name] if is_kwarg else args[i]
            text = (f"{name}=" if is_kwarg else "") + _typename(obj)
            parts.append(text if tp_name(obj) in accepted else f"!{text}!")
        return _joined(parts, args)


def tp_name(obj) -> str:
    """``Py_TYPE(obj)->tp_name``, which upstream prints."""
    return typename(obj)


def _typename(obj) -> str:
    if isinstance(obj, (tuple, list)):
        inner = ", ".join(tp_name(o) for o in obj)
        if isinstance(obj, tuple):
            return f"tuple of ({inner}{',' if len(obj) == 1 else ''})"
        return f"list of [{inner}]"
    return tp_name(obj)


def _plain(args, kwargs) -> str:
    parts = [tp_name(a) for a in args] + [f"{k}={tp_name(v)}" for k, v in kwargs.items()]
    return _joined(parts, args)


def _joined(parts, args) -> str:
    """Upstream appends ", " after every part and takes the last one back only when there were
    positional arguments: keywords alone keep it."""
    if args or not parts:
        return "(" + ", ".join(parts) + ")"
    return "(" + "".join(f"{p}, " for p in parts) + ")"


def format_invalid_args(name: str, args, kwargs, options: list[str]) -> str:
    """``name() received an invalid combination of arguments - ...`` for the visible
    signatures' printed forms ``options``."""
    msg = f"{name}() received an invalid combination of arguments - "
    # upstream walks the keywords in a std::unordered_map, whose libstdc++ list puts a key that
    # lands in an empty bucket first: the reverse of the call's order (exact unless two keywords
    # share a bucket)
    kwargs = dict(reversed(list(kwargs.items())))
    if len(options) == 1:
        option = _Option(options[0])
        unmatched = option.unmatched_keywords(kwargs) if kwargs else []
        if unmatched:
            return msg + "got unrecognized keyword arguments: " + ", ".join(unmatched)
        got = option.marked(args, kwargs) if option.count_matches(args, kwargs) else \
            _plain(args, kwargs)
        return f"{msg}got {got}, but expected {option.printable}"
    lines = [f"{msg}got {_plain(args, kwargs)}, but expected one of:"]
    for text in options:
        option = _Option(text)
        lines.append(f" * {text}")
        if option.count_matches(args, kwargs):
            unmatched = option.unmatched_keywords(kwargs) if kwargs else []
            if unmatched:
                lines.append("      didn't match because some of the keywords were incorrect: "
                             + ", ".join(unmatched))
            else:
                lines.append("      didn't match because some of the arguments have invalid "
                             "types: " + option.marked(args, kwargs))
    return "\n".join(lines) + "\n"
