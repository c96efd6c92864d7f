"""Run one call in a worker interpreter and describe what happened.

The same code runs on upstream (generation) and on ours (replay): inputs are rebuilt from the stored
descriptors on both sides, so upstream's numbers are computed from exactly the tensors ours receives.
Nothing escapes a call: every exception becomes a record (type, MRO names, message, phase). A
per-call timer stops a call that runs long, and ``untimed_retry`` runs it again without one: a
verdict never depends on the machine's load (a real hang is left to the worker's process budget).
"""

from __future__ import annotations

import functools
import signal
import time

from . import codec, live, naming

REFUSAL = "TorchnativeNotImplementedError"  # torchnative._C._refuse: ours declining by name

# Hook for "which path served this call" (kernel vs decomposition). Contract: when ours' torch._C has
# this function, calling it returns the entries recorded since the previous call and clears them,
# each entry a pair (ATen overload name, path), e.g. ("aten.add.Tensor", "kernel"). Absent -> None,
# which reports as "unknown". Upstream does not have it.
# Which path served each operator (kernel, decomposition, ...): torchnative's door counts them
# in ``torchnative.csrc.dispatch.door.served``; upstream has no such counter.
_mark: dict = {}


class CaseTimeout(Exception):
    """A call ran past its time budget."""


def _alarm(signum, frame):
    raise CaseTimeout("call exceeded its time budget")


def untimed_retry(run):
    """A call stopped by its timer (``CaseTimeout``) is run once more with no timer: slow is not
    wrong. Only a hang then outlives the worker's process budget (workers.py), and shows as a
    case with no result."""
    @functools.wraps(run)
    def wrapper(*args, timeout: float | None = 20.0, **kwargs):
        res = run(*args, timeout=timeout, **kwargs)
        if timeout is not None and (res.get("exc") or {}).get("type") == CaseTimeout.__name__:
            res = run(*args, timeout=None, **kwargs)
            res["untimed_retry"] = True
        return res
    return wrapper


def describe_exception(exc: BaseException, phase: str) -> dict:
    mro = [c.__name__ for c in type(exc).__mro__]
    return {"type": type(exc).__name__, "mro": mro, "message": str(exc)[:400], "phase": phase,
            "refusal": REFUSAL in mro}


def dispatch_log(torch):
    """(overload, path) pairs served since the previous call; None on upstream."""
    try:
        from torchnative.csrc.dispatch.door import served
    except ImportError:
        return None
    new = [[op, path] for (op, path), n in served.items() if n > _mark.get((op, path), 0)]
    _mark.clear()
    _mark.update(served)
    return new


@untimed_retry
def run_call(call: dict, arrays, torch, store: codec.Store, *, seed: int, cast: dict | None = None,
             timeout: float | None = 20.0, probe_rng: bool = False, live_args=None, fn=None) -> dict:
    """Rebuild inputs, seed, call ``call["fn"]``, encode the result. Never raises.

    ``probe_rng`` (upstream only) records whether the call drew from the default generator: that,
    not a difference between runs, is what makes an op random. ``live_args``: a regenerated sample's
    (args, kwargs), copied for this call instead of decoded (live.py); ``fn``: the callable itself
    where the spelling names OpInfo's own.
    """
    res: dict = {"ok": False}
    phase = "rebuild"
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout or 0)  # 0: no timer
    start = time.perf_counter()
    try:
        kept: list = []
        if live_args is not None:
            args, kwargs = live_copy(live_args, torch, cast, kept)
        else:
            args = codec.decode({"T": "list", "v": call["args"]}, arrays, torch, cast, kept)
            kwargs = {k: codec.decode(v, arrays, torch, cast, kept) for k, v in call["kwargs"].items()}
        out_kw = call.get("out")
        if out_kw is not None:
            kwargs["out"] = codec.decode(out_kw, arrays, torch, cast)
        fn = fn if fn is not None else naming.resolve(call["fn"], torch)
        try:  # seeding failure must not mask the op's own outcome (only random ops depend on it)
            torch.manual_seed(seed)
        except Exception as exc:
            res["seed_error"] = describe_exception(exc, "seed")
        dispatch_log(torch)  # drain entries made while rebuilding inputs
        state = torch.default_generator.get_state() if probe_rng else None
        phase = "call"
        out = fn(*args, **kwargs)
        res["paths"] = dispatch_log(torch)
        if probe_rng:
            res["rng_advanced"] = not torch.equal(state, torch.default_generator.get_state())
        phase = "encode"
        res["value"] = codec.encode(out, store, torch, storage=False)
        res["alias"] = alias_tags(out, args, kwargs.get("out"), kept, torch)
        res["ok"] = True
    except (Exception, CaseTimeout) as exc:  # a case must never take the worker down
        res["exc"] = describe_exception(exc, phase)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    res["seconds"] = round(time.perf_counter() - start, 6)
    return res


def live_copy(sample, torch, cast, kept):
    args, kwargs = sample
    return (live.fresh(list(args), torch, cast, kept),
            {k: live.fresh(v, torch, cast, kept) for k, v in kwargs.items()})


def alias_tags(out, args, out_kw, kept, torch) -> list[str]:
    """Per output tensor, in encoding order: is it the input, the out= tensor, a view of an input?"""
    outs = out_kw if isinstance(out_kw, (list, tuple)) else [out_kw]
    tags: list[str] = []

    def tag(t):
        if args and t is args[0]:
            return "input0"
        if any(t is o for o in outs if o is not None):
            return "out"
        try:
            if t.untyped_storage().nbytes() == 0:
                return "new"
            ptr = t.untyped_storage().data_ptr()
            return "view" if any(ptr == k.untyped_storage().data_ptr() for k in kept) else "new"
        except Exception as exc:
            return f"unknown:{type(exc).__name__}"

    def walk(v):
        if isinstance(v, torch.Tensor):
            tags.append(tag(v))
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)

    walk(out)
    return tags
