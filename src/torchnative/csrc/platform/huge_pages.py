"""Weights that one-row products stream, backed by transparent huge pages in place.

A decode step reads every weight once per token (540 MB for SmolLM2-135M), each from memory. On
4 KiB pages every page of a weight costs a TLB miss and a page walk while the product streams
through it; on a 2 MiB page one walk serves 512 of them. Linux (6.1 and later) can back an
existing range of private anonymous memory with huge pages where it is, keeping its addresses
and its contents (``madvise(MADV_COLLAPSE)``), in the THP mode "madvise" too (many systems'
default, these machines' included). Nothing a program can observe changes -- not an address, a
value, an alias or a numpy view -- only how the kernel maps the bytes. Ranges are widened to
whole 2 MiB blocks, so a weight's neighbours in the heap (usually the other weights) come along.

SmolLM2-135M's 211 one-row products on an AMD Zen 4 took 23.1-24.6 CPU ms per token on 4 KiB
pages and 20.7-21.3 on huge pages, its unfused decode 43.5-45.6 and 39.8-41.9
(``bench/huge_pages.py``, docs/performance.md "Weights on huge pages").

A collapse costs a fresh 2 MiB page and a copy, made while it holds the process's memory-map
lock for writing. Writing 512 MB of fresh memory on huge pages took 62 ms where the kernel had
free huge pages at hand, 712 ms on these virtual machines where it had not (their host takes
back the guest's free 2 MiB blocks, so a first touch is the host's fault); collapsing straight
into such pages stalled the decode itself (``_fresh_huge_pages``). So the work is done only for
what repays it, and off the caller's path:

* a weight of at least ``MIN_BYTES`` that one-row products have read ``READS`` times: a decode
  that has gone on for a few tokens (a transient weight, read once, never qualifies);
* by one background thread (its calls release the GIL), which first faults in as many fresh
  huge pages as it will need and frees them, then collapses each 2 MiB block once; its CPU time
  is the process's all the same (about a second for SmolLM2 here), and the thread is seen in
  ``threading.enumerate()`` (a daemon named "torchnative-huge-pages", started at the first
  weight that qualifies).

Off unless ``TORCHNATIVE_HUGE_PAGES=1``: with it, the chat's 12-token answer to "What is 2+2?"
(``./run.sh``) ran at 10.1-11.9 tokens/s against 22.0-23.6 without, on these VMs, where the
move's work beside a short decode costs more than it saves; long decodes gain. Where the call is
missing (not Linux, an older kernel) or refused for a range (file-backed memory,
``MADV_NOHUGEPAGE``), the bytes simply stay on the pages they are on.
"""

from __future__ import annotations

import mmap
import os
import sys
import threading
import time
import weakref

BLOCK = 1 << 21         # a huge page on x86-64 and arm64 with 4 KiB base pages
MIN_BYTES = 1 << 18     # smaller weights: few pages to save, the whole block to copy
READS = 4               # one-row products of a weight before it is collapsed
_MADV_COLLAPSE = 25

# opt-in: on these VMs a short answer pays for it (./run.sh's 12 tokens: 22-24 -> 10-12 tok/s)
ENABLED = sys.platform.startswith("linux") and os.environ.get("TORCHNATIVE_HUGE_PAGES") == "1"

_seen: dict[int, tuple] = {}   # id(array) -> (weakref to it, reads so far)
_state = {"queue": None, "thread": None, "libc": None, "lock": threading.Lock()}
# what the thread has done: blocks collapsed and refused, its CPU seconds (bench/huge_pages.py)
done = {"blocks": 0, "refused": 0, "cpu_s": 0.0}

_MADV_HUGEPAGE, _MADV_POPULATE_WRITE = 14, 23  # Linux's values on every architecture


def _libc():
    """libc's madvise, mmap and munmap through ctypes (each call releases the GIL)."""
    if _state["libc"] is None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        libc.madvise.restype = ctypes.c_int
        libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                              ctypes.c_int, ctypes.c_long]
        libc.mmap.restype = ctypes.c_size_t
        libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        libc.munmap.restype = ctypes.c_int
        libc.map_failed = ctypes.c_size_t(-1).value
        _state["libc"] = libc
    return _state["libc"]


def blocks(address: int, nbytes: int) -> tuple[int, int]:
    """The whole 2 MiB blocks covering ``nbytes`` bytes at ``address``: (start, length)."""
    lo = address & ~(BLOCK - 1)
    hi = (address + nbytes + BLOCK - 1) & ~(BLOCK - 1)
    return lo, hi - lo


def _fresh_huge_pages(libc, nbytes: int) -> None:
    """Fault in, then free, ``nbytes`` of huge pages in a scratch mapping. A collapse copies into
    fresh huge pages while it holds the process's memory-map lock for writing, so on a virtual
    machine whose host has taken the guest's free 2 MiB blocks back, each first touch there (the
    host's fault) stalled every other thread's page faults and allocations: a new process's first
    12 tokens took 1.42 s of wall time instead of 0.55 (``bench/huge_pages.py --first 12``, run
    on the tree before this step). Touched here first, where only this thread waits, the pages
    the collapse is then given are backed already (0.57-0.75 s, docs/performance.md)."""
    size = nbytes + BLOCK  # whole aligned blocks inside, however the mapping falls
    addr = libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE,
                     mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    if addr == libc.map_failed:
        return
    try:
        if libc.madvise(addr, size, _MADV_HUGEPAGE) == 0:
            libc.madvise(addr, size, _MADV_POPULATE_WRITE)  # Linux 5.14
    finally:
        libc.munmap(addr, size)


def _block_starts(ranges) -> list[int]:
    """The starts of the 2 MiB blocks ``ranges`` cover, each once: weights share blocks with their
    neighbours, and each block is collapsed on its own (a range that spans two mappings would be
    refused whole). Nothing is remembered between batches: memory freed and mapped again at the
    same addresses is new memory (a block collapsed already returns at once)."""
    return sorted({lo + i * BLOCK for lo, n in ranges for i in range(n // BLOCK)})


def _work(queue) -> None:
    libc = _libc()
    while True:
        batch = [queue.get()]
        while not queue.empty():  # the ranges one decode step hands over, taken together
            batch.append(queue.get())
        t = time.thread_time()
        try:
            starts = _block_starts([item for item in batch if item[1]])
            if starts:
                _fresh_huge_pages(libc, len(starts) * BLOCK)
            for lo in starts:
                done["blocks" if libc.madvise(lo, BLOCK, _MADV_COLLAPSE) == 0 else "refused"] += 1
        except Exception:  # the thread must outlive any one batch: drain() waits on it
            pass
        done["cpu_s"] += time.thread_time() - t
        for event, n in batch:
            if n == 0:  # drain()'s marker: every range handed over before it is handled
                event.set()


def _submit(item) -> None:
    with _state["lock"]:
        if _state["thread"] is None:
            import queue

            _state["queue"] = queue.SimpleQueue()
            _state["thread"] = threading.Thread(target=_work, args=(_state["queue"],),
                                                name="torchnative-huge-pages", daemon=True)
            _state["thread"].start()
        _state["queue"].put(item)


def streamed(w) -> None:
    """Note one one-row product over the numpy array ``w`` (a weight); at its ``READS``-th, hand
    its blocks to the thread. ``w`` must be the same array object on every call (a tensor's own
    array, not a view made per call)."""
    if not ENABLED:
        return
    key = id(w)
    entry = _seen.get(key)
    if entry is not None and entry[0]() is w:
        reads = entry[1] + 1
        if reads > READS:
            return
    else:
        if w.nbytes < MIN_BYTES:
            return
        reads = 1
    _seen[key] = (weakref.ref(w, lambda _, key=key: _seen.pop(key, None)), reads)
    if reads == READS:
        _submit(blocks(w.ctypes.data, w.nbytes))


def drain(timeout: float | None = None) -> bool:
    """Wait until the thread has handled every range handed to it so far (at most ``timeout``
    seconds); whether it has."""
    if _state["thread"] is None:
        return True
    event = threading.Event()
    _submit((event, 0))
    return event.wait(timeout)


def _after_fork_in_child() -> None:
    # the thread does not exist in a forked child; the child's copy of the queue is not its own
    _state["queue"] = _state["thread"] = None
    _state["lock"] = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
