"""Weights streamed by one-row products move onto huge pages in place (csrc/platform/huge_pages.py):
which arrays qualify and when, the blocks a range covers, and on this machine's kernel the real
collapse -- the bytes and their address unchanged, the range on huge pages afterwards -- in this
process, in a forked child, and not at all unless ``TORCHNATIVE_HUGE_PAGES=1``."""

from __future__ import annotations

import mmap
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from torchnative.csrc.platform import huge_pages as hp

BLOCK = hp.BLOCK


def test_blocks_cover_whole_huge_pages():
    assert hp.blocks(BLOCK + 5, 10) == (BLOCK, BLOCK)
    assert hp.blocks(BLOCK, BLOCK) == (BLOCK, BLOCK)
    assert hp.blocks(2 * BLOCK - 4, 8) == (BLOCK, 2 * BLOCK)   # straddles a boundary
    assert hp.blocks(3 * BLOCK + 4096, 5 * BLOCK) == (3 * BLOCK, 6 * BLOCK)


def test_each_block_of_a_batch_is_collapsed_once():
    # two weights sharing their middle block, and a third inside the first
    assert hp._block_starts([(0, 2 * BLOCK), (BLOCK, 2 * BLOCK), (BLOCK, BLOCK)]) == \
        [0, BLOCK, 2 * BLOCK]
    assert hp._block_starts([(5 * BLOCK, BLOCK), (0, BLOCK)]) == [0, 5 * BLOCK]


@pytest.fixture
def submitted(monkeypatch):
    """The ranges handed to the thread, instead of handing them."""
    got = []
    monkeypatch.setattr(hp, "_submit", got.append)
    monkeypatch.setattr(hp, "ENABLED", True)
    return got


def test_a_weight_qualifies_at_its_nth_read_once(submitted):
    w = np.ones((576, 576), np.float32)
    for _ in range(hp.READS - 1):
        hp.streamed(w)
    assert submitted == []
    hp.streamed(w)
    assert submitted == [hp.blocks(w.ctypes.data, w.nbytes)]
    for _ in range(5):
        hp.streamed(w)
    assert len(submitted) == 1


def test_small_and_transient_arrays_never_qualify(submitted):
    small = np.ones(hp.MIN_BYTES // 4 - 1, np.float32)
    for _ in range(hp.READS + 2):
        hp.streamed(small)
        hp.streamed(np.ones((576, 576), np.float32))  # a new array each time: read once
    assert submitted == []


def test_a_freed_arrays_reads_do_not_count_for_the_next(submitted):
    w = np.ones((576, 576), np.float32)
    for _ in range(hp.READS - 1):
        hp.streamed(w)
    key = id(w)
    del w
    assert key not in hp._seen
    w2 = np.ones((576, 576), np.float32)
    hp.streamed(w2)
    assert submitted == []


def test_switched_off(submitted, monkeypatch):
    monkeypatch.setattr(hp, "ENABLED", False)
    w = np.ones((576, 576), np.float32)
    for _ in range(hp.READS + 1):
        hp.streamed(w)
    assert submitted == []


def _huge_kb(address: int) -> int:
    """AnonHugePages of the mapping holding ``address`` in this process."""
    with open("/proc/self/smaps") as f:
        inside = False
        for line in f:
            head = line.split()[0]
            if "-" in head and all(c in "0123456789abcdef-" for c in head):
                lo, hi = (int(x, 16) for x in head.split("-"))
                inside = lo <= address < hi
            elif inside and line.startswith("AnonHugePages:"):
                return int(line.split()[1])
    raise AssertionError("no mapping holds the address")


def _weight_in_fresh_pages(nbytes: int = 4 * BLOCK):
    """A float32 array over private anonymous memory faulted in on 4 KiB pages, starting on a
    2 MiB boundary: every block it covers lies inside its own mapping, so no block can be
    refused for reaching past it (a refusal reads as a kernel without the call)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("transparent huge pages are a Linux feature")
    with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
        mode = f.read()
    if "[madvise]" not in mode:
        pytest.skip(f"THP mode {mode.strip()!r}: the 4 KiB control needs 'madvise'")
    m = mmap.mmap(-1, nbytes + BLOCK, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    start = -np.frombuffer(m, np.uint8).ctypes.data % BLOCK
    w = np.frombuffer(m, np.float32, nbytes // 4, start).reshape(-1, 1024)
    w[...] = np.arange(w.size, dtype=np.float32).reshape(w.shape)
    return m, w


def _collapsed(w) -> None:
    before = w.copy()
    address = w.ctypes.data
    refused = hp.done["refused"]
    for _ in range(hp.READS):
        hp.streamed(w)
    assert hp.drain(timeout=60), "the thread did not finish"
    if hp.done["refused"] > refused:
        pytest.skip("this kernel refuses MADV_COLLAPSE (Linux < 6.1)")
    assert w.ctypes.data == address
    np.testing.assert_array_equal(w, before)
    assert _huge_kb(address) >= 2 * BLOCK // 1024


def test_the_real_collapse_keeps_bytes_and_address(monkeypatch):
    monkeypatch.setattr(hp, "ENABLED", True)
    m, w = _weight_in_fresh_pages()
    assert _huge_kb(w.ctypes.data) == 0  # control: 4 KiB pages before
    _collapsed(w)
    del w
    m.close()


def test_a_forked_child_starts_its_own_thread(monkeypatch):
    monkeypatch.setattr(hp, "ENABLED", True)
    m, w = _weight_in_fresh_pages()
    hp.drain(timeout=60)  # the parent's thread exists (or never did): the child has none
    pid = os.fork()
    if pid == 0:  # the child: never a hang (alarm), its verdict in the exit code
        code = 1
        try:
            signal.alarm(60)
            _collapsed(w)
            code = 0
        except pytest.skip.Exception:
            code = 3
        except BaseException:
            code = 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code == 3:
        pytest.skip("this kernel refuses MADV_COLLAPSE (Linux < 6.1)")
    assert code == 0
    del w
    m.close()


def test_the_switch_is_read_from_the_environment():
    code = "from torchnative.csrc.platform import huge_pages as hp; print(hp.ENABLED)"
    base = {k: v for k, v in os.environ.items() if k != "TORCHNATIVE_HUGE_PAGES"}
    for value, expected in ((None, "False"), ("0", "False"),
                            ("1", str(sys.platform.startswith("linux")))):
        env = base if value is None else {**base, "TORCHNATIVE_HUGE_PAGES": value}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             env=env, timeout=120)
        assert out.stdout.strip() == expected, out.stderr
