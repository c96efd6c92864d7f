"""The chat's checkpoint load pauses Python's cyclic collector and always gives it back as it was:
after a load that failed on a corrupt file, and when it was off before."""

from __future__ import annotations

import gc

import pytest

from torchnative.apps import chat


@pytest.fixture
def collector_restored():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_inside_and_restored_after(collector_restored):
    gc.enable()
    with chat.collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    with chat.collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()   # off before: left off


def test_restored_after_an_error(collector_restored):
    gc.enable()
    with pytest.raises(KeyError):
        with chat.collector_paused():
            raise KeyError("x")
    assert gc.isenabled()


def test_a_corrupt_gguf_file_is_refused_and_the_collector_is_back(tmp_path, collector_restored):
    (tmp_path / "bad.gguf").write_bytes(b"GGUF" + bytes(range(60)))
    gc.enable()
    with pytest.raises(ValueError, match="GGUF"):
        chat.load(tmp_path, "bad.gguf", quiet=True)
    assert gc.isenabled()
