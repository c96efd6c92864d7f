"""torch.Tensor's public attributes are upstream's, no more and no fewer, and so are those of
the other objects torch._C hands out (storages, dtypes, devices, generators, layouts): what ours
does not have is refused by name when called, never answered by a placeholder upstream lacks (a
removed ``names`` or ``is_hpu``, a generator's ``engine``). Names starting with an underscore are
internal on both sides and are not compared."""

from __future__ import annotations

from torchnative.testing import upstream

PROGRAM = r"""
import json, torch

t = torch.rand(2, 2)


def has(name):
    try:
        return hasattr(t, name)
    except Exception as e:  # a property that refuses this tensor (imag of a real one)
        return type(e).__name__


public = sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
others = {"UntypedStorage": torch.UntypedStorage(4), "Size": torch.Size([2]),
          "dtype": torch.float32, "device": torch.device("cpu"), "Generator": torch.Generator(),
          "finfo": torch.finfo(torch.float32), "iinfo": torch.iinfo(torch.int32),
          "layout": torch.strided, "memory_format": torch.contiguous_format,
          "qscheme": torch.per_tensor_affine, "Parameter": torch.nn.Parameter(torch.rand(2))}
print(json.dumps({"public": public, "on an instance": {n: has(n) for n in public},
                  "others": {k: sorted(n for n in dir(o) if not n.startswith("_"))
                             for k, o in others.items()}}))
"""


def test_public_tensor_attributes_as_upstream():
    ours, theirs = upstream.run_both(PROGRAM)
    extra = sorted(set(ours["public"]) - set(theirs["public"]))
    missing = sorted(set(theirs["public"]) - set(ours["public"]))
    assert not extra and not missing, (extra, missing)
    assert ours["on an instance"] == theirs["on an instance"]
    # the objects torch._C hands out beside tensors (storages, dtypes, generators, layouts)
    assert ours["others"] == theirs["others"]
    assert len(theirs["public"]) > 500  # control: the listing reached torch.Tensor's methods
