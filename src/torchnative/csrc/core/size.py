"""torch.Size: a tuple of ints that stays a Size under slicing and concatenation."""

from __future__ import annotations

import operator

from .typename import TP_NAMES


_tuple_getitem = tuple.__getitem__
_new_tuple = tuple.__new__


class Size(tuple):
    __slots__ = ()

    def __new__(cls, sizes=()):
        items = []
        for i, s in enumerate(sizes):
            if type(s) is int:
                items.append(s)
                continue
            if type(s).__name__ == "SymInt":
                items.append(s)  # a symbolic size stays symbolic (indexing would specialize it)
                continue
            try:
                items.append(operator.index(s))
            except TypeError:
                if type(s).__name__ == "SymInt":
                    items.append(s)
                    continue
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(s).__name__}')") from None
        return super().__new__(cls, items)

    def __repr__(self):
        return f"torch.Size([{', '.join(repr(s) for s in self)}])"

    __str__ = __repr__

    def __getitem__(self, item):
        if type(item) is int and type(self) is Size:
            return _tuple_getitem(self, item)  # x.shape[-1]: without super()'s lookup
        r = super().__getitem__(item)
        # a slice's items were checked when this Size was made (x.shape[:-1] on every layer)
        return _new_tuple(Size, r) if isinstance(item, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(self) + tuple(other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple(other) + tuple(self))

    def __mul__(self, n):
        return Size(tuple(self) * n)

    __rmul__ = __mul__

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __reduce__(self):
        return (Size, (tuple(self),))


Size.__module__ = "torch"

TORCH_C = {"torch._C.Size": Size}


TP_NAMES[Size] = "torch.Size"
