"""What the door's quiet float state costs (platform/float_state.py): per call of a few small
operators, and per SmolLM2 decode step.

Usage: .venv/bin/python bench/float_state_cost.py [--rounds 6] [--decode]

Ours only: the state is ours' mechanism, upstream's C++ has no counterpart to time. In one
process, rounds alternate between the door as it is and the door with its two context-variable
calls made no-ops (numpy's error state then left as the caller set it), so the difference is the
whole mechanism's cost, the cache miss of numpy's next read of its state included. Each figure is
the median over rounds of CPU µs per call (``timeit``, the best of 5 repeats).

``--decode`` also loads the chat's SmolLM2 checkpoint and prints how many times one decode step
sets numpy's error state (every setter counted: the door's, and kernels' own ``np.errstate``) and
the CPU ms per token, state on and off, alternating. Under ``PYTHONPATH=<another tree's src>`` the
count runs on that tree; the on/off rows need a door that has the quiet state.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit


def _door():
    from torchnative.csrc.dispatch import door

    return door if hasattr(door, "_QUIET_SET") else None


def _alternate(door, rounds: int, measure) -> dict:
    """{True: [...], False: [...]}: ``measure()`` with the state on, then off, ``rounds`` times
    (the order swapped every round)."""
    on_set, on_reset = door._QUIET_SET, door._QUIET_RESET
    out = {True: [], False: []}
    try:
        for r in range(rounds):
            for on in ((True, False) if r % 2 == 0 else (False, True)):
                door._QUIET_SET, door._QUIET_RESET = (on_set, on_reset) if on else \
                    (lambda state: None, lambda token: None)
                out[on].append(measure())
    finally:
        door._QUIET_SET, door._QUIET_RESET = on_set, on_reset
    return out


def ops(rounds: int) -> None:
    import torch
    import torch.nn.functional as F

    door = _door()
    a, b = torch.rand(16, 16), torch.rand(16, 16)
    v = torch.rand(4, 8, 16)
    h, w = torch.randn(1, 1, 576), torch.randn(64, 576)
    cases = {"add 16x16": lambda: a + b, "cat two 16x16": lambda: torch.cat((a, b), -1),
             "F.linear one row, 64x576": lambda: F.linear(h, w),
             "mean(-1, keepdim) of 576": lambda: h.mean(-1, keepdim=True),
             "view (a view: no state)": lambda: v.view(32, 16)}

    def best(fn, n=2000):
        return min(timeit.repeat(fn, number=n, repeat=5, timer=time.process_time)) / n * 1e6

    print(f"{'CPU us per call':32s} {'state on':>9s} {'off':>9s} {'cost':>7s}")
    with torch.inference_mode():
        for name, fn in cases.items():
            fn()
            got = _alternate(door, rounds, lambda fn=fn: best(fn))
            on, off = statistics.median(got[True]), statistics.median(got[False])
            print(f"{name:32s} {on:9.2f} {off:9.2f} {on - off:+7.2f}")


def decode(rounds: int) -> None:
    import torch
    from numpy._core._ufunc_config import _extobj_contextvar as state

    from torchnative.apps.chat import load

    torch.set_num_threads(1)
    _, model = load(None, None, quiet=True, dtype=torch.float32)
    prompt = torch.tensor([[1, 504, 3458, 282, 4649, 314, 6, 7]])
    step = torch.tensor([[42]])
    sets = [0]

    def count(frame, event, arg):
        if event == "c_call" and getattr(arg, "__name__", "") == "set" and \
                getattr(arg, "__self__", None) is state:
            sets[0] += 1

    with torch.inference_mode():
        cache = model(prompt, use_cache=True).past_key_values
        model(step, past_key_values=cache, use_cache=True)
        sys.setprofile(count)
        model(step, past_key_values=cache, use_cache=True)
        sys.setprofile(None)
        print(f"numpy error-state sets per decode step: {sets[0]}")
        door = _door()
        if door is None:
            return

        def per_token(n=12):
            cache = model(prompt, use_cache=True).past_key_values
            c = time.process_time()
            for _ in range(n):
                model(step, past_key_values=cache, use_cache=True)
            return (time.process_time() - c) / n * 1e3

        got = _alternate(door, rounds, per_token)
        on, off = statistics.median(got[True]), statistics.median(got[False])
        print(f"decode CPU ms per token: state on {on:.1f}, off {off:.1f} ({on - off:+.1f}; "
              f"rounds on {' '.join(f'{x:.1f}' for x in got[True])}, "
              f"off {' '.join(f'{x:.1f}' for x in got[False])})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--decode", action="store_true")
    args = ap.parse_args()
    import os

    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    if _door() is not None:
        ops(args.rounds)
    if args.decode:
        decode(args.rounds)


if __name__ == "__main__":
    main()
