"""A quick census of OpInfo samples on ours for one dtype: which refuse, by refusal (ranked),
and which compute values far from upstream's. Not the golden harness (no derived tolerance, no
spellings): a fast way to find what to fix, whose figures docs/agreement-complex.md quotes.

    .venv-upstream/bin/python tools/complex_probe.py generate complex64 6 /tmp/c64.pt
    .venv/bin/python tools/complex_probe.py replay /tmp/c64.pt 1e-4

``generate`` (upstream) runs up to N samples of every OpInfo entry supporting the dtype whose op
is a public torch callable, and saves the inputs and upstream's result (torch.save);
``replay`` (ours) calls the same callable on the same inputs and compares at ``rtol`` = ``atol``.
"""

from __future__ import annotations

import collections
import io
import signal
import sys
import warnings


def _roots(torch):
    import torch.nn.functional as F

    return {"torch": torch, "torch.Tensor": torch.Tensor, "F": F, "torch.special": torch.special,
            "torch.fft": torch.fft, "torch.linalg": torch.linalg}


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout()


def _plain(torch, r):
    if isinstance(r, torch.Tensor):
        return r.detach().resolve_conj().resolve_neg().clone()
    if isinstance(r, (tuple, list)):
        return [_plain(torch, x) for x in r]
    return r


def generate(dtype: str, cap: int, path: str) -> None:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    dt, roots, out = getattr(torch, dtype), _roots(torch), []
    where = {}
    for rn, root in roots.items():
        for attr in dir(root):
            try:
                where.setdefault(id(getattr(root, attr)), f"{rn}.{attr}")
            except Exception:  # properties that refuse on the class
                pass
    for info in op_db:
        path_ = where.get(id(info.op))
        if path_ is None or dt not in info.supported_dtypes("cpu"):
            continue
        try:
            signal.alarm(10)
            samples = list(info.sample_inputs("cpu", dt, requires_grad=False))[:cap]
        except BaseException:
            continue
        finally:
            signal.alarm(0)
        for i, s in enumerate(samples):
            try:
                signal.alarm(10)
                torch.manual_seed(0)
                res = ("ok", _plain(torch, info.op(s.input, *s.args, **s.kwargs)))
            except BaseException as e:
                res = ("err", type(e).__name__)
            finally:
                signal.alarm(0)
            name = info.name + ("." + info.variant_test_name if info.variant_test_name else "")
            try:
                buf = io.BytesIO()
                torch.save((name, path_, s.input, s.args, s.kwargs, res), buf)
            except Exception:  # samples holding lambdas do not travel
                continue
            out.append(buf.getvalue())
    torch.save(out, path)
    print(f"{len(out)} samples")


def _tensors(torch, r):
    if isinstance(r, torch.Tensor):
        return [r]
    return [x for x in r if isinstance(x, torch.Tensor)] if isinstance(r, (tuple, list)) else []


def _differs(np, a, b, tol):
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"{tuple(a.shape)} {a.dtype} vs upstream {tuple(b.shape)} {b.dtype}"
    x, y = a.resolve_conj().resolve_neg().numpy(), b.numpy()
    if x.dtype.kind in "biu":
        return None if np.array_equal(x, y) else "integer values differ"
    ok = np.isclose(x, y, rtol=tol, atol=tol, equal_nan=True)
    return None if ok.all() else f"{(~ok).sum()}/{ok.size} values off"


def replay(path: str, tol: float) -> None:
    import numpy as np
    import torch

    from torchnative.csrc.core.refuse import TorchnativeNotImplementedError

    roots = _roots(torch)
    verdicts, refusals, first = collections.Counter(), collections.defaultdict(set), {}
    refused = collections.Counter()
    for blob in torch.load(path, weights_only=False):
        name, path_, inp, args, kwargs, (kind, ref) = torch.load(io.BytesIO(blob),
                                                                 weights_only=False)
        root, attr = path_.rsplit(".", 1)
        fn = getattr(roots[root], attr)
        try:
            signal.alarm(10)
            torch.manual_seed(0)
            r = fn(inp, *args, **kwargs)
            if kind == "err":
                why = f"computed where upstream raised {ref}"
            else:
                mine, theirs = _tensors(torch, r), _tensors(torch, ref)
                why = "a different number of tensors" if len(mine) != len(theirs) else next(
                    (d for d in (_differs(np, a, b, tol) for a, b in zip(mine, theirs)) if d),
                    None)
        except TorchnativeNotImplementedError as e:
            why = "refused: " + str(e).split("\n")[0][:140]
            refusals[why].add(name)
            refused[why] += 1
        except BaseException as e:
            why = None if kind == "err" and type(e).__name__ == ref else \
                f"raised {type(e).__name__}: {str(e)[:80]}"
        finally:
            signal.alarm(0)
        verdicts["agrees" if why is None else "refuses" if why.startswith("refused")
                 else "differs"] += 1
        if why is not None:
            first.setdefault(name, why)
    print(dict(verdicts))
    print("refusals, ranked by samples:")
    for why, n in refused.most_common():
        print(f"  {n} samples: {why} ({', '.join(sorted(refusals[why]))})")
    print("entries whose first sample differs:")
    for name, why in sorted(first.items()):
        if not why.startswith("refused"):
            print(f"  {name}: {why}")


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, _alarm)
    if sys.argv[1] == "generate":
        generate(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        replay(sys.argv[2], float(sys.argv[3]))
