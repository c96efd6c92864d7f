"""``Tensor.numpy()`` as upstream's tensor_to_numpy: without ``force`` the device, grad mode with
requires_grad and the conjugate/negative bits are checked first; then a meta tensor has no data
and only numpy's dtypes convert (bfloat16, complex32 and float8 are refused, with ``force``
too)."""

from __future__ import annotations

import pytest

import sides
from torchnative.testing.upstream import available

pytestmark = pytest.mark.skipif(not available(), reason="upstream torch environment not set up")

PROGRAM = r'''
def res(f):
    try:
        a = f()
        return ["ok", str(a.dtype), list(a.shape), a.tobytes().hex()]
    except Exception as e:
        return [type(e).__name__, str(e)]

x = torch.ones(2, requires_grad=True)
cases = {
    "requires grad": lambda: x.numpy(),
    "requires grad, force": lambda: x.numpy(force=True),
    "meta": lambda: torch.empty(2, device="meta").numpy(),
    "meta, force": lambda: torch.empty(2, device="meta").numpy(force=True),
    "conj": lambda: torch.ones(2, dtype=torch.complex64).conj().numpy(),
    "conj, force": lambda: (torch.ones(2, dtype=torch.complex64) * 1j).conj().numpy(force=True),
    "neg": lambda: torch.ones(2, dtype=torch.complex64).conj().imag.numpy(),
    "view of a leaf that requires grad": lambda: x[:1].numpy(),
}
for name in ("bfloat16", "float16", "complex32", "float8_e4m3fn", "float8_e5m2", "uint16",
             "uint32", "uint64", "bool", "int8"):
    dt = getattr(torch, name)
    cases[name] = lambda dt=dt: torch.ones(2, dtype=dt).numpy()
    cases[name + ", force"] = lambda dt=dt: torch.ones(2, dtype=dt).numpy(force=True)
out = {k: res(f) for k, f in cases.items()}
with torch.no_grad():
    out["requires grad under no_grad"] = res(lambda: x.numpy())
    out["bfloat16 requiring grad under no_grad"] = res(
        lambda: torch.ones(2, dtype=torch.bfloat16, requires_grad=True).numpy())
print(json.dumps(out))
'''


def test_numpy_agrees_with_upstream():
    ours, theirs = sides.on_both(PROGRAM)
    assert theirs["bfloat16"][0] == "TypeError" and theirs["requires grad under no_grad"][0] == "ok"
    wrong = sides.differing(ours, theirs)
    assert wrong == {}
