"""DLPack exchange with numpy, compared with upstream in separate processes: memory shared both
ways (numpy of a tensor, a tensor of numpy, capsules from ``to_dlpack``), strides, dtypes, a
consumed capsule, the producer's refusals (requires_grad, the conjugate bit), read-only
producers, ``copy=``; and ``Tensor.is_pinned`` (no accelerator: nothing is pinned)."""

from __future__ import annotations

import pytest

from torchnative.testing import upstream

PROGRAM = r'''
import json, warnings
import numpy as np
import torch

out = {}
def tr(f):
    try:
        return f()
    except Exception as e:
        return "ERR " + type(e).__name__ + ": " + str(e)[:150]

a = torch.arange(6.).view(2, 3)
n = np.from_dlpack(a)
n[0, 0] = 9
out["np_from_torch"] = [n.tolist(), a.tolist(), n.strides]
b = torch.from_dlpack(np.arange(4, dtype=np.int32))
out["torch_from_np"] = [b.tolist(), str(b.dtype)]
t = torch.arange(8).view(2, 4)[:, 1::2]
out["strided"] = [np.from_dlpack(t).tolist(), np.from_dlpack(t).strides]
cap = torch.utils.dlpack.to_dlpack(a)
out["capsule"] = str(cap).split(" at ")[0]
c = torch.from_dlpack(cap)
c[1, 1] = -1
out["roundtrip"] = a.tolist()
out["reuse_capsule"] = tr(lambda: torch.from_dlpack(cap))
out["t2t"] = repr(torch.from_dlpack(torch.ones(2, dtype=torch.float16)).dtype)
out["bool"] = tr(lambda: np.from_dlpack(torch.tensor([True, False])).tolist())
out["complex"] = tr(lambda: str(np.from_dlpack(torch.tensor([1 + 2j])).tolist()))
out["grad"] = tr(lambda: np.from_dlpack(torch.ones(2, requires_grad=True)))
out["conj"] = tr(lambda: np.from_dlpack(torch.tensor([1 + 2j]).conj()))
out["copy"] = tr(lambda: np.from_dlpack(a, copy=True).tolist())
x = np.arange(3.)
x.flags.writeable = False
r = torch.from_dlpack(x)
r[0] = 5
out["from_readonly"] = [x.tolist(), r.tolist()]
out["device"] = list(a.__dlpack_device__())
out["to_dev"] = list(torch._C._torchDeviceToDLDevice(torch.device("cpu")))
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    out["pinned"] = [a.is_pinned(), a.is_pinned("cpu"), [str(x.category.__name__) for x in w]]
from torch.utils.data import DataLoader
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    batch = next(iter(DataLoader(torch.arange(4.), batch_size=2, pin_memory=True)))
out["pin_memory_loader"] = [batch.tolist(), batch.is_pinned(), len(w) > 0]
print(json.dumps(out))
'''


def test_dlpack_and_pinning_as_upstream():
    if not upstream.available():
        pytest.skip("upstream environment missing")
    ours, theirs = upstream.run_both(PROGRAM)
    # the memory is shared on upstream: the program's writes show through
    assert theirs["roundtrip"][1][1] == -1.0 and theirs["np_from_torch"][1][0][0] == 9.0
    assert ours == theirs


def test_bfloat16_export_refuses_by_name():
    import numpy as np
    import torch

    from torchnative.csrc.core.refuse import TorchnativeNotImplementedError

    with pytest.raises(TorchnativeNotImplementedError, match="bfloat16"):
        np.from_dlpack(torch.ones(2, dtype=torch.bfloat16))
