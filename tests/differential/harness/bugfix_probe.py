"""Cases run on both torches, each in its own process, recorded exactly.

A case is a Python expression; its record (``prelude.probe``) is the error (type and first line
of the message) or the result as ``prelude.encode`` writes it: class, shape, dtype, stride,
device and, for tensors with data, the exact values. The cases here are copies, shape
computations and integer-valued arithmetic, so exact equality is upstream's own float32 error
(zero), not a guess.
"""
from __future__ import annotations

import json

import sides


def program(cases: dict[str, str], setup: str = "") -> str:
    """The snippet that runs ``setup`` and prints each case's record, keyed by name."""
    return setup + f"\nprint(json.dumps({{k: probe(v, globals()) for k, v in {cases!r}.items()}}))\n"


def disagreements(cases, ours: dict, theirs: dict) -> dict:
    """The cases whose records differ, with both records."""
    return {k: {"ours": ours[k], "upstream": theirs[k]} for k in cases if ours[k] != theirs[k]}


def assert_agree(cases: dict[str, str], setup: str = "") -> None:
    ours, theirs = sides.on_both(program(cases, setup))
    bad = disagreements(cases, ours, theirs)
    assert not bad, json.dumps(bad, indent=1)
