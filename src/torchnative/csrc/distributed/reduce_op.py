"""ReduceOp and its RedOpType enum, with upstream's equalities between the two.

Upstream's ``ReduceOp.SUM`` is a ``RedOpType`` member, ``ReduceOp(RedOpType)`` wraps one, the
two compare equal, and ``isinstance(ReduceOp.SUM, ReduceOp)`` is True (a metaclass check).
"""

from __future__ import annotations

import enum

MODULE = "torch._C._distributed_c10d"


class RedOpType(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8

    def __int__(self):
        return self.value

    def __index__(self):
        return self.value

    def __eq__(self, other):
        if type.__instancecheck__(ReduceOp, other):
            return other.op is self
        return enum.Enum.__eq__(self, other)

    __hash__ = enum.Enum.__hash__

    def __call__(self, factor):
        raise NotImplementedError(
            f"{MODULE}.ReduceOp.{self.name}(factor): only PREMUL_SUM takes a factor, and the "
            "gloo backend does not support PREMUL_SUM")


RedOpType.__qualname__ = "ReduceOp.RedOpType"
RedOpType.__module__ = MODULE


class _ReduceOpMeta(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, RedOpType) or type.__instancecheck__(cls, obj)


class ReduceOp(metaclass=_ReduceOpMeta):
    RedOpType = RedOpType

    def __init__(self, op: RedOpType = RedOpType.SUM):
        if type.__instancecheck__(ReduceOp, op):
            op = op.op
        if not isinstance(op, RedOpType):
            raise TypeError(f"ReduceOp(): expected a ReduceOp.RedOpType, got {type(op).__name__}")
        self.op = op

    @property
    def factor(self):
        return None

    def __eq__(self, other):
        if isinstance(other, RedOpType):
            return self.op is other
        if type.__instancecheck__(ReduceOp, other):
            return self.op is other.op
        return NotImplemented

    def __hash__(self):
        return hash(self.op)

    def __getstate__(self):
        return self.op.value

    def __setstate__(self, value):
        self.op = RedOpType(value)


for _m in RedOpType:
    setattr(ReduceOp, _m.name, _m)
ReduceOp.__module__ = MODULE


def op_type(op) -> RedOpType:
    """The RedOpType of a ReduceOp, a RedOpType, or anything upstream accepts as one."""
    if isinstance(op, RedOpType):
        return op
    if type.__instancecheck__(ReduceOp, op):
        return op.op
    raise TypeError(f"expected a torch.distributed.ReduceOp, got {type(op).__name__}")
