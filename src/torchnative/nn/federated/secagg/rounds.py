"""One SecAgg+ round driven in memory, with dropouts injected by stage (for tests and for
engines that already carry messages themselves)."""

from __future__ import annotations

import numpy as np

from .protocol import Config, Coordinator, Participant

STAGES = ("setup", "share_keys", "masked_input", "unmask")


def run_round(updates: dict[int, np.ndarray], cfg: Config, weights: dict[int, int] | None = None,
              drop: dict[int, str] | None = None, observe: dict | None = None) -> tuple[np.ndarray, float, list[int]]:
    """Aggregate ``updates`` (participant id -> flat float vector) through the four stages.

    ``drop`` maps an id to the stage it fails to answer (it answers every stage before that one).
    ``observe``, when given, receives what the coordinator saw (the masked vectors by id).
    Returns (weighted mean of the survivors, total weight, survivor ids)."""
    drop = drop or {}
    weights = weights or {nid: 1 for nid in updates}
    for nid, stage in drop.items():
        if stage not in STAGES:
            raise ValueError(f"unknown stage {stage!r} for participant {nid}; stages are {STAGES}")

    def answers_in(stage, ids):
        return [nid for nid in ids if nid not in drop or STAGES.index(drop[nid]) > STAGES.index(stage)]

    coord = Coordinator(cfg, sorted(updates))
    parts = {nid: Participant(nid, cfg) for nid in updates}
    pks = {nid: parts[nid].setup(coord.graph[nid]) for nid in answers_in("setup", parts)}
    offered = coord.public_keys(pks)
    sealed = {nid: parts[nid].share_keys(offered[nid]) for nid in answers_in("share_keys", offered)}
    inbox = coord.route(sealed)
    masked = {nid: parts[nid].masked_input(inbox[nid], updates[nid], weights[nid])
              for nid in answers_in("masked_input", inbox)}
    if observe is not None:
        observe["masked"] = {nid: v.copy() for nid, v in masked.items()}
    requests = coord.collect(masked)
    shares = {nid: parts[nid].unmask(*requests[nid]) for nid in answers_in("unmask", requests)}
    mean, weight = coord.unmask(shares)
    return mean, weight, coord.survivors
