"""Which c10d classes answer ``get_error`` and what ``ErrorType`` holds, compared with upstream:
upstream's gloo and fake backends have no ``get_error`` (only the DETAIL-debug wrapper group
does), so ours must not answer it either (``hasattr`` is how upstream code asks)."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

needs_upstream = pytest.mark.skipif(not upstream.available(), reason="needs .venv-upstream")

PROGRAM = r"""
import json, os, socket
import torch
import torch.distributed as dist
import torch._C._distributed_c10d as c

out = {"ErrorType": {k: int(v.value) for k, v in c.ErrorType.__members__.items()},
       "classes": {k: hasattr(getattr(c, k), "get_error")
                   for k in ("Backend", "ProcessGroup", "ProcessGroupGloo", "FakeProcessGroup")}}
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
store = dist.TCPStore("127.0.0.1", port, 1, True)
dist.init_process_group("gloo", store=store, rank=0, world_size=1)
backend = dist.group.WORLD._get_backend(torch.device("cpu"))
out["live_backend"] = [type(backend).__name__, hasattr(backend, "get_error"),
                       hasattr(dist.group.WORLD, "get_error")]
dist.destroy_process_group()
print(json.dumps(out))
"""


@needs_upstream
def test_error_type_and_get_error_agree_with_upstream():
    ours, theirs = upstream.run_both(PROGRAM, timeout=600)
    assert ours == theirs
    assert theirs["ErrorType"]["SUCCESS"] == 0 and theirs["live_backend"][0] == "ProcessGroupGloo"
