"""A delta refuses what it cannot cover when it is made (no module, names that are no list of
strings, a parent that is no delta), and a file it cannot write is a DeltaFileError naming the
path, with no temporary file left behind; a read-only directory is a real one."""

from __future__ import annotations

import os

import pytest
import torch
import torch.nn as nn

from torchnative import delta as D


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(3, 3), nn.LayerNorm(3))


@pytest.mark.parametrize("model, names, parent, error, match", [
    ("m", ["0.weight"], None, TypeError, "model must be a torch.nn.Module, got str"),
    (None, "0.weight", None, TypeError, "names must be a list of parameter or buffer names"),
    (None, None, None, TypeError, "names must be a list"),
    (None, [1], None, TypeError, "names must be strings, got int"),
    (None, ["nope"], None, KeyError, "'nope' is not a parameter or buffer of Sequential"),
    (None, ["0.weight"], "p", TypeError, "parent must be a Delta, got str"),
])
def test_bad_arguments_are_refused_by_name(model, names, parent, error, match):
    with pytest.raises(error, match=match):
        D.SessionDelta(_model() if model is None else model, names, parent=parent)


def test_a_missing_directory_is_a_delta_file_error(tmp_path):
    d = D.PersistentDelta(_model(), ["0.weight"], user="u")
    with pytest.raises(D.DeltaFileError, match="cannot write delta file .*missing"):
        d.save(tmp_path / "missing" / "d.safetensors")
    d.save(tmp_path / "d.safetensors")  # a writable path still saves, and only the file stays
    assert [p.name for p in tmp_path.iterdir()] == ["d.safetensors"]


def test_a_read_only_directory_keeps_no_temporary_file(tmp_path):
    d = D.PersistentDelta(_model(), ["0.weight"], user="u")
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("running as a user that writes into read-only directories (root)")
        with pytest.raises(D.DeltaFileError, match="cannot write delta file"):
            d.save(locked / "d.safetensors")
        assert list(locked.iterdir()) == []
    finally:
        os.chmod(locked, 0o700)
