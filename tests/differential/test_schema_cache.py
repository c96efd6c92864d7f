"""The on-disk table of parsed built-in schemas gives exactly what the parser gives."""

from __future__ import annotations

import marshal

import pytest

from torchnative.csrc.ops import jit_types as jt
from torchnative.csrc.ops import schema as S
from torchnative.csrc.ops import schema_cache as C


def test_every_cached_schema_is_the_parse():
    table = C._generate()
    assert len(table) > 3500  # nearly every built-in is cacheable
    for text, enc in table.items():
        parser = S._Parser(text, True)
        parsed = parser.parse_exactly_one()
        assert type(enc) is bytes, text  # one string per entry, no containers for the collector
        assert C.same(parsed, C.decode(marshal.loads(enc))), text


def test_same_has_teeth():
    """A rebuilt schema with another (equal-looking) type object, default or alias differs."""
    text = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    parsed = S._Parser(text, True).parse_exactly_one()
    enc = C.encode(parsed)
    assert C.same(parsed, C.decode(enc))
    args = list(enc[2])
    args[2] = args[2][:4] + (1.0,) + args[2][5:]  # alpha=1.0 instead of 1
    assert not C.same(parsed, C.decode(enc[:2] + (tuple(args),) + enc[3:]))
    args = list(enc[2])
    args[0] = (args[0][0], ("TI",), ("TI",)) + args[0][3:]  # the inferred tensor singleton
    assert not C.same(parsed, C.decode(enc[:2] + (tuple(args),) + enc[3:]))
    text = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"
    parsed = S._Parser(text, True).parse_exactly_one()
    enc = C.encode(parsed)
    args = list(enc[2])
    args[0] = args[0][:6] + ((False,) + args[0][6][1:],)  # (a) instead of (a!)
    assert not C.same(parsed, C.decode(enc[:2] + (tuple(args),) + enc[3:]))


def test_refined_types_stay_out():
    refined = jt.TensorType.get()._refine(_dtype=6)
    with pytest.raises(C._Uncacheable):
        C._encode_type(refined)


def test_builtin_parse_is_the_parsers_object():
    """An operator's schema from the table is what torch._C.parse_schema returns for its text
    afterwards (the same object, as after a parse). Checked in a fresh interpreter: in this
    process, tests that parse the same text earlier (or reset the parse cache) decide which
    object is interned first."""
    from torchnative.testing.upstream import run_json_ours

    assert run_json_ours("""
import json, torch
from torchnative.csrc.ops import schema_cache as C
schema = torch.ops.aten.addcmul.default._schema
text = "aten::" + str(schema).partition("::")[2]
print(json.dumps([torch._C.parse_schema(text) is schema, C.parse_builtin(text) is schema]))
""") == [True, True]
