"""What every behaviour script shares (autograd_*_behaviour.py, fx_behaviour.py, ...): how a case
records an error or a tensor as JSON, how the cases run, and the script entry point. Each script
runs as a file under upstream's interpreter (it puts this directory on its path) and is imported
by its test under ours (tests/differential/conftest.py puts it there)."""

from __future__ import annotations

import json


def err(fn) -> str:
    """What calling ``fn`` raised, as "Type: message" (or "no error")."""
    try:
        fn()
    except Exception as e:  # the case records what was raised
        return f"{type(e).__name__}: {e}"
    return "no error"


def vals(t):
    """A tensor's values as a flat float64 list (None for None)."""
    return None if t is None else t.detach().double().reshape(-1).tolist()


def edges(fn) -> list:
    """A graph node's next_functions as [name, input_nr] pairs."""
    return [[None if n is None else n.name(), i] for n, i in fn.next_functions]


def run_cases(cases: dict, after=None) -> dict:
    """Every case's result; an exception escaping a case is its result too. ``after`` runs after
    each case (restoring global state a case may leave behind)."""
    r = {}
    for name, fn in cases.items():
        try:
            r[name] = fn()
        except Exception as e:
            r[name] = f"EXC {type(e).__name__}: {e}"
        finally:
            if after is not None:
                after()
    return r


def main(probes, quiet: bool = False) -> None:
    """The script entry point: one JSON object, case name -> result, on stdout (``quiet``: with
    warnings ignored, as the test runs ours)."""
    import warnings

    import torch

    if quiet:
        warnings.simplefilter("ignore")
    print(json.dumps(probes(torch)))
