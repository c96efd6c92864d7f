"""Refuse bad updates by name before they reach an aggregator."""

from __future__ import annotations

import torch

from .errors import RejectedUpdate

FLOAT_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


def spec_of(params: dict) -> dict:
    """name -> shape, the contract every update of a run must meet."""
    return {n: tuple(t.shape) for n, t in params.items()}


def check_update(update: dict, spec: dict, *, participant=None, round=None, allow_int=False) -> None:
    def refuse(msg):
        who = "" if participant is None else f"participant {participant}"
        when = "" if round is None else f" round {round}"
        raise RejectedUpdate(f"{who}{when}: {msg}".lstrip(": ").strip(), participant, round)

    missing = [n for n in spec if n not in update]
    extra = [n for n in update if n not in spec]
    if missing or extra:
        refuse(f"update names differ from the model's: missing {missing}, unexpected {extra}")
    for n, shape in spec.items():
        t = update[n]
        if not isinstance(t, torch.Tensor):
            refuse(f"update for {n!r} is a {type(t).__name__}, not a tensor")
        if tuple(t.shape) != tuple(shape):
            refuse(f"update for {n!r} has shape {tuple(t.shape)}, expected {tuple(shape)}")
        if t.dtype not in FLOAT_DTYPES:
            if allow_int and t.dtype in (torch.int64, torch.int32):
                continue
            refuse(f"update for {n!r} has dtype {t.dtype}, expected a floating dtype")
        if not bool(torch.isfinite(t).all()):
            bad = int((~torch.isfinite(t)).sum())
            refuse(f"update for {n!r} has {bad} non-finite values (NaN or inf)")
