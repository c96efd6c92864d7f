"""The public-API census (docs/surface_api.json, summarised in docs/surface.md): every public name
of torch, torch.Tensor, torch.nn.functional, torch.linalg, torch.special and torch.fft called on
upstream and on ours and classified. The classification rules are checked here against records
made to agree and to disagree; the full rerun of both probes is a slow test."""

from __future__ import annotations

import json

import pytest

from torchnative import api_probe, census

T32 = "torch.float32"


def _t(vals, dtype=T32, shape=None):
    return {"tensor": dtype, "shape": shape or [len(vals)], "values": vals}


UP = {"kind": "callable", "candidate": 0, "result": _t([1.0, -2.0, 3.0]),
      "float64": _t([1.00000001, -2.0, 3.0], "torch.float64")}


@pytest.mark.parametrize("ours, state", [
    ({"result": _t([1.0, -2.0, 3.0])}, "agrees"),
    ({"result": _t([1.0, -2.0, 3.0 * (1 + 2 ** -23)])}, "agrees"),       # one ulp
    ({"result": _t([1.0, 2.0, 3.0])}, "differs"),                          # wrong sign
    ({"result": _t([1.0, -2.0, 3.001])}, "differs"),                       # beyond upstream's error
    ({"result": _t([1.0, -2.0, 3.0], "torch.float64")}, "differs"),        # wrong dtype
    ({"result": _t([1.0, -2.0, 3.0], shape=[3, 1])}, "differs"),           # wrong shape
    ({"result": {"error": "TorchnativeNotImplementedError", "message": "aten::x: no"}}, "refuses"),
    ({"result": {"error": "RuntimeError", "message": "boom"}}, "differs"),
])
def test_classification_of_a_tensor_result(ours, state):
    assert census.classify(UP, {"kind": "callable", **ours})[0] == state


def test_classification_of_errors_absence_and_non_callables():
    up_err = {"kind": "callable", "candidate": 0, "result": {"error": "TypeError", "message": "x"}}
    assert census.classify(up_err, {"result": {"error": "TypeError", "message": "y"}})[0] == \
        "errors as upstream"
    assert census.classify(up_err, {"result": {"error": "RuntimeError", "message": "y"}})[0] == \
        "differs"
    assert census.classify(up_err, {"result": _t([1.0])})[0] == "differs"
    assert census.classify(UP, None)[0] == "absent"
    assert census.classify({"kind": "class"}, {"kind": "class"})[0] == "agrees"
    assert census.classify({"kind": "class"}, {"kind": "callable"})[0] == "differs"
    assert census.classify({"kind": "callable", "skipped": "state"}, {"kind": "callable"})[0] == \
        "not called"


def test_upstreams_float32_error_sets_the_tolerance():
    # upstream's float32 result is off its float64 run by 1e-3 on most elements: ours may be too
    up = {"kind": "callable", "result": _t([1.0] * 10),
          "float64": _t([1.001] * 10, "torch.float64")}
    assert census.classify(up, {"result": _t([1.0009] * 10)})[0] == "agrees"
    assert census.classify(up, {"result": _t([1.01] * 10)})[0] == "differs"


def test_table_covers_every_public_name_of_ours():
    import torch

    table = json.loads(census.API_TABLE.read_text())
    assert set(table) == set(api_probe.NAMESPACES)
    for ns in api_probe.NAMESPACES:
        # submodules appear as attributes once something imports them (torch.onnx, lazily)
        names = {n for n, kind in api_probe.public_names(torch, ns).items() if kind != "module"}
        extra = names - set(table[ns])
        assert not extra, f"{ns}: public names upstream does not have: {sorted(extra)[:20]}"
        assert all(state in census.API_STATES for state, _ in table[ns].values())


@pytest.mark.slow
def test_api_census_is_current(tmp_path):
    fresh = census.run_api_probes(tmp_path)
    stored = json.loads(census.API_TABLE.read_text())
    changed = {f"{ns}.{n}": (stored[ns].get(n), st) for ns, names in fresh.items()
               for n, st in names.items() if stored[ns].get(n, [None])[0] != st[0]}
    assert not changed, f"rerun: .venv/bin/python -m torchnative.census --api --write docs/surface.md; {changed}"
