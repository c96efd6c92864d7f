"""torch.fx's compiled helpers: ``_NodeBase``, ``_NodeIter``, ``_fx_map_aggregate``/``_fx_map_arg``.

Upstream writes these in C++ (torch/csrc/fx/node.cpp) for speed; ``torch.fx.Node`` subclasses
``_NodeBase`` and ``torch.fx.Graph`` walks its doubly linked node list with ``_NodeIter``. The
semantics reproduced here are the ones fx's Python relies on:

* mapping an argument structure rebuilds tuples (NamedTuples through their own type), turns every
  list into an ``immutable_list`` and every dict into an ``immutable_dict``, maps a slice's three
  fields, and keeps an exact empty tuple or an empty immutable container as the same object;
* ``_update_args_kwargs`` normalises args/kwargs and keeps the use-def edges (``_input_nodes`` and
  the inputs' ``users``) in one pass;
* a node's sort key is a tuple of ints that ``_prepend`` computes from its neighbours, so nodes
  compare by position in the graph without renumbering.
"""

from __future__ import annotations

_classes: dict[str, type] = {}


def _fx_class(module: str, name: str) -> type:
    # imported on first use: torch.fx imports torch._C, so this cannot happen at import time
    key = f"{module}.{name}"
    cls = _classes.get(key)
    if cls is None:
        import importlib

        cls = _classes[key] = getattr(importlib.import_module(module), name)
    return cls


def _is_node(x) -> bool:
    return isinstance(x, _fx_class("torch.fx.node", "Node"))


def _map_aggregate(a, fn):
    if isinstance(a, tuple):
        if not a and type(a) is tuple:
            return a
        mapped = tuple(_map_aggregate(e, fn) for e in a)
        if type(a) is not tuple and hasattr(a, "_fields"):
            return type(a)(*mapped)
        return mapped
    if isinstance(a, list):
        ilist = _fx_class("torch.fx.immutable_collections", "immutable_list")
        if not a and type(a) is ilist:
            return a
        out = ilist()
        for e in a:
            list.append(out, _map_aggregate(e, fn))
        return out
    if isinstance(a, dict):
        idict = _fx_class("torch.fx.immutable_collections", "immutable_dict")
        if not a and type(a) is idict:
            return a
        out = idict()
        for k, v in a.items():
            dict.__setitem__(out, k, _map_aggregate(v, fn))
        return out
    if isinstance(a, slice):
        return slice(_map_aggregate(a.start, fn), _map_aggregate(a.stop, fn),
                     _map_aggregate(a.step, fn))
    return fn(a)


def fx_map_aggregate(*args):
    if len(args) != 2:
        raise TypeError("map_aggregate() takes exactly two arguments")
    a, fn = args
    return _map_aggregate(a, fn)


def fx_map_arg(*args):
    if len(args) != 2:
        raise TypeError("map_arg() takes exactly two arguments")
    a, fn = args
    return _map_aggregate(a, lambda x: fn(x) if _is_node(x) else x)


class NodeBase:
    # slots, as upstream's C struct members: Node's own __dict__ holds only what Python adds
    __slots__ = ("_erased", "_prev", "_next", "graph", "name", "op", "target", "type",
                 "_input_nodes", "_args", "_kwargs", "users", "_repr_fn", "meta", "_sk")

    def __init__(self, graph, name, op, target, type, /):
        self._erased = False
        self._prev = self
        self._next = self
        self.graph = graph
        self.name = name
        self.op = op
        self.target = target
        self.type = type
        self._input_nodes = {}
        self.users = {}
        self._repr_fn = None
        self.meta = {}
        self._sk = ()

    def _update_args_kwargs(self, *args):
        if len(args) != 2:
            raise TypeError(
                "_update_args_kwargs() requires exactly 2 arguments (new_args, new_kwargs)")
        new_args, new_kwargs = args
        inputs = self._input_nodes
        for old in inputs:
            old.users.pop(self, None)
        inputs.clear()

        def visit(x):
            if _is_node(x):
                inputs.setdefault(x)
                x.users.setdefault(self)
            return x

        self._args = _map_aggregate(new_args, visit)
        self._kwargs = _map_aggregate(new_kwargs, visit)

    def _remove_from_list(self):
        p, n = self._prev, self._next
        if p is self and n is self:
            return
        p._next = n
        n._prev = p

    def _replace_input_with(self, *args):
        if len(args) != 2:
            raise TypeError(
                "_replace_input_with() requires exactly 2 arguments (old_input, new_input)")
        old, new = args

        def swap(x):
            return new if x is old else x

        self._update_args_kwargs(_map_aggregate(self._args, swap),
                                 _map_aggregate(self._kwargs, swap))

    def _prepend(self, x):
        if x is self:
            return
        if not _is_node(x):
            raise TypeError("_prepend() argument must be a Node")
        if self.graph is not x.graph:
            raise AssertionError("Attempting to move a Node into a different Graph")
        x._remove_from_list()
        p = self._prev
        p._next = x
        x._prev = p
        x._next = self
        self._prev = x
        # a key strictly between the neighbours' keys, as short as possible
        psk, nsk = x._prev._sk, x._next._sk
        if len(psk) > len(nsk):
            k = list(psk[: len(nsk) + 1])
            k[-1] += 1
        elif len(psk) < len(nsk):
            k = list(nsk[: len(psk) + 1])
            k[-1] -= 1
        else:
            k = [*psk, 0]
        x._sk = tuple(k)

    @property
    def _sort_key(self):
        return self._sk

    @_sort_key.setter
    def _sort_key(self, value):
        if not isinstance(value, tuple):
            raise TypeError("_sort_key must be an tuple of ints")
        self._sk = tuple(int(v) for v in value)

    def __lt__(self, other):
        if not _is_node(other):
            return NotImplemented
        return self._sk < other._sk

    def __gt__(self, other):
        if not _is_node(other):
            return NotImplemented
        return self._sk > other._sk

    def __le__(self, other):
        if self is other:
            return True
        return self.__lt__(other)

    def __ge__(self, other):
        if self is other:
            return True
        return self.__gt__(other)


NodeBase.__name__ = NodeBase.__qualname__ = "_NodeBase"
NodeBase.__module__ = "torch._C"


class NodeIter:
    """Walks the circular node list from ``root`` (exclusive), skipping erased nodes; reads the
    links as it goes, so nodes inserted or erased during the walk are seen as upstream sees them."""

    __slots__ = ("_reversed", "_root", "_cur")

    def __init__(self, root, reversed=False):
        self._reversed = bool(reversed)
        self._root = root
        self._cur = root

    def __iter__(self):
        return self

    def __next__(self):
        step = "_prev" if self._reversed else "_next"
        cur = getattr(self._cur, step)
        while cur is not self._root:
            if not cur._erased:
                self._cur = cur
                return cur
            cur = getattr(cur, step)
        self._cur = cur
        raise StopIteration


NodeIter.__name__ = NodeIter.__qualname__ = "_NodeIter"
NodeIter.__module__ = "torch._C"

TORCH_C = {
    "torch._C._NodeBase": NodeBase,
    "torch._C._NodeIter": NodeIter,
    "torch._C._fx_map_aggregate": fx_map_aggregate,
    "torch._C._fx_map_arg": fx_map_arg,
}
