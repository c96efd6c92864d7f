"""torch.multiprocessing and DataLoader workers on ours, with real processes, compared with
upstream: tensors moved into shared memory (``share_memory_``, Hogwild training, tensors through
multiprocessing queues under fork and spawn), DataLoader with worker processes (batches, dicts,
persistent workers, worker seeds, an exception in a worker, a worker killed by SIGKILL), and the
torch._C entry points behind them, called directly (values, errors, messages)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from torchnative.testing import upstream

PROGRAMS = Path(__file__).parent / "multiprocessing_programs"


def _ours(name: str) -> dict:
    proc = subprocess.run([upstream.ours_python(), str(PROGRAMS / name)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _theirs(name: str) -> dict:
    return json.loads(upstream.run_script(PROGRAMS / name, timeout=300).stdout.strip()
                      .splitlines()[-1])


@pytest.fixture(scope="module")
def need_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")


def test_storage_sharing_entry_points_as_upstream(need_upstream):
    ours, theirs = _ours("storage_surface.py"), _theirs("storage_surface.py")
    # what the program checks, on upstream first: a view made before share_memory_ sees writes
    # after it, and a killed worker is reported by its signal
    assert theirs["views"][0] == [0.0, 9.0, 2.0, 3.0]
    assert theirs["worker_fails"][0].startswith("RuntimeError: DataLoader worker (pid PID) is "
                                                "killed by signal: Killed.")
    assert ours == theirs


def test_shared_tensors_between_processes(need_upstream):
    """A child's in-place write reaches the parent's tensor and an older view of it; two
    Hogwild workers train one shared model; tensors (a transposed one, a dict with an empty
    tensor) travel through queues under fork and spawn, and arrive in shared memory."""
    ours, theirs = _ours("sharing.py"), _theirs("sharing.py")
    assert theirs["child_write"] == [[1.0] * 5, [1.0, 1.0]] and theirs["moved"] is True
    assert ours == theirs


def test_dataloader_workers(need_upstream):
    ours, theirs = _ours("dataloader_workers.py"), _theirs("dataloader_workers.py")
    assert theirs["dies_fast"] is True and "exited unexpectedly" in theirs["dies"]
    assert ours == theirs


def test_tensors_follow_their_storage_into_shared_memory():
    """The control for the re-pointing: every tensor over a storage, made before it moved into
    shared memory, reads and writes the shared pages afterwards (not its old private copy)."""
    import torch

    base = torch.arange(6.)
    row = base.view(2, 3)[1]
    alias = base.detach()
    base.share_memory_()
    fd, nbytes = base.untyped_storage()._share_fd_cpu_()
    other = torch.UntypedStorage._new_shared_fd_cpu(fd, nbytes)  # the same pages, mapped again
    seen = torch.tensor([], dtype=torch.float32).set_(other)
    seen[4] = -1.0
    assert row.tolist() == [3.0, -1.0, 5.0]
    assert alias[4].item() == -1.0 and base[4].item() == -1.0
    row[0] = 7.0
    assert seen[3].item() == 7.0


def test_file_system_strategy_refuses_by_name():
    import torch

    from torchnative.csrc.core.refuse import TorchnativeNotImplementedError

    with pytest.raises(TorchnativeNotImplementedError, match="file_system"):
        torch.UntypedStorage(4)._share_filename_cpu_()
