"""What the object collectives rest on, compared with upstream in separate processes: the legacy
``torch.ByteTensor(storage)`` constructor (``_object_to_tensor``) and a one-element integer tensor
passed as a size (``scatter_object_list`` resizes with one). The collectives themselves are
compared in tests/system/test_distributed.py (real processes, gloo)."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

needs_upstream = pytest.mark.skipif(not upstream.available(), reason="needs .venv-upstream")

PROGRAM = r"""
import json, warnings
import torch
warnings.simplefilter("ignore")

def run(fn, values=True):
    try:
        t = fn()
        return [str(t.dtype), list(t.shape), t.tolist() if values and t.dtype == torch.uint8 else None]
    except Exception as e:
        return [type(e).__name__, str(e)]

s = torch.ByteStorage._from_buffer(b"hello")
out = {
    "typed": run(lambda: torch.ByteTensor(s)),
    "untyped": run(lambda: torch.ByteTensor(s.untyped())),
    "wrong_type": run(lambda: torch.FloatTensor(s)),
    "tensor_wrong_type": run(lambda: torch.Tensor(s)),
    "float_over_untyped_6": run(lambda: torch.FloatTensor(torch.UntypedStorage(6))),
    "long_over_untyped": run(lambda: torch.LongTensor(torch.UntypedStorage(16))),
    "float_typed": run(lambda: torch.Tensor(torch.FloatStorage(3))),
    "with_device": run(lambda: torch.ByteTensor(s, device="cpu")),
    "resize_long1": run(lambda: torch.empty(0, dtype=torch.uint8).resize_(torch.LongTensor([5])), False),
    "resize_0dim": run(lambda: torch.empty(0, dtype=torch.uint8).resize_(torch.tensor(4)), False),
    "resize_float": run(lambda: torch.empty(0).resize_(torch.tensor([2.0]))),
    "zeros_two": run(lambda: torch.zeros(torch.tensor([3, 2]))),
    "zeros_bool": run(lambda: torch.zeros(torch.tensor([True]))),
    "pool_broadcast": run(lambda: torch.nn.functional.max_pool2d(torch.ones(1, 1, 4, 4),
                                                                 torch.tensor([2]))),
    "reshape_varargs": run(lambda: torch.ones(6).reshape(torch.tensor([2]), 3)),
}
# the tensor shares the storage's bytes both ways
t = torch.ByteTensor(s)
t[0] = 72
s[1] = 69
out["shared"] = [bytes(s.untyped()).decode(), t.tolist()]
print(json.dumps(out))
"""


@needs_upstream
def test_legacy_storage_constructor_and_size_tensors_agree_with_upstream():
    ours, theirs = upstream.run_both(PROGRAM, timeout=600)
    assert ours == theirs
    # the program can tell a refusal from a tensor and a copy from a view
    assert theirs["wrong_type"][0] == "RuntimeError" and theirs["typed"][1] == [5]
    assert theirs["shared"] == ["HEllo", [72, 69, 108, 108, 111]]


@needs_upstream
@pytest.mark.slow
def test_subgroups_agree_with_upstream():
    """new_subgroups, new_subgroups_by_enumeration, new_group over a subset, and split_group's
    refusal on CPU, at world 3 (real processes, gloo)."""
    import json
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from distributed_launch import check_ok, launch

    got = {}
    for side in ("ours", "upstream"):
        results = launch("subgroups.py", [side] * 3, timeout=600)
        check_ok(results)
        got[side] = [json.loads(o.strip().splitlines()[-1]) for _, o, _ in results]
    assert got["ours"] == got["upstream"]
    # rank 2 sits in the even group of the enumeration with rank 0: 1+3 and 1+100
    assert got["ours"][2]["by_enumeration"] == [1, 2, [4.0, 101.0], [0, 2]]
    assert got["ours"][1]["new_group_subset"] is None


@needs_upstream
@pytest.mark.parametrize("sides", [("upstream", "ours"), ("ours", "upstream")],
                         ids=["upstream-first", "ours-first"])
def test_file_store_shared_with_upstream(sides, tmp_path):
    """One FileStore file, an upstream process and one of ours: each reads what the other
    wrote (set, add, delete, multi_set, compare_set, append), and the file is removed once both
    stores are gone, as upstream's FileStore does."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    from distributed_launch import PROGRAMS, side_command

    path = tmp_path / "store"
    procs = []
    for role, side in zip(("first", "second"), sides):
        exe, env = side_command(side)
        procs.append(subprocess.Popen([exe, str(PROGRAMS / "file_store_peer.py"), str(path), role],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True))
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        outs.append(json.loads(out.strip().splitlines()[-1]))
    first, second = outs
    assert second == {"a": "from first", "n": 7, "gone": False, "m": ["1", "2"],
                      "num_keys": second["num_keys"]}
    assert first["add"] == 5 and first["b"] == "from second" and first["n"] == 7
    assert first["cas"] == "v2"
    assert not path.exists()
