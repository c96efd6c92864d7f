"""The golden judge: a result neither side's codec can carry is unjudged, except a singleton
(NotImplemented, Ellipsis) returned by both sides, which is the same value."""

from __future__ import annotations

from torchnative.testing.golden.pipeline import unjudged


def _encode_failure(type_name: str) -> dict:
    return {"ok": False, "exc": {"type": "Unserializable", "message": type_name, "phase": "encode",
                                 "refusal": False}}


def test_both_returning_not_implemented_agree():
    case = {"upstream": _encode_failure("NotImplementedType")}
    v = unjudged(case, _encode_failure("NotImplementedType"))
    assert v is not None and v.status == "agrees" and not v.failures


def test_other_unserializable_results_stay_unjudged():
    singleton = {"upstream": _encode_failure("NotImplementedType")}
    assert unjudged(singleton, _encode_failure("ellipsis")).status == "result-unserializable"
    assert unjudged(singleton, {"ok": True, "value": {"T": "int", "v": 1}}).status == "result-unserializable"
    assert unjudged(singleton, None).status == "result-unserializable"
    module = {"upstream": _encode_failure("module")}  # one type, many values: never judged by type
    assert unjudged(module, _encode_failure("module")).status == "result-unserializable"
