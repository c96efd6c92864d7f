"""A SecAgg+ round between processes over TCP: the coordinator serves, participants connect.

The coordinator asks each stage of every live participant in turn and treats a closed
connection or a timeout as a dropout for the rest of the round, exactly as the in-memory driver
treats a missing answer.
"""

from __future__ import annotations

import socket
import time

import numpy as np

from . import wire
from .protocol import Config, Coordinator, Participant


def serve_round(listener: socket.socket, expected: int, cfg: Config, timeout: float = 60.0,
                observe: dict | None = None) -> tuple[np.ndarray, float, list[int]]:
    """Accept ``expected`` participants on ``listener`` and run one round with them."""
    listener.settimeout(timeout)
    conns: dict[int, socket.socket] = {}
    deadline = time.monotonic() + timeout
    while len(conns) < expected:
        listener.settimeout(max(0.1, deadline - time.monotonic()))
        try:
            sock, _ = listener.accept()
        except socket.timeout:
            raise TimeoutError(f"{len(conns)} of {expected} participants connected within {timeout} s") from None
        sock.settimeout(timeout)
        hello = wire.recv(sock)
        conns[int(hello["id"])] = sock
    coord = Coordinator(cfg, sorted(conns))

    def ask(requests: dict[int, dict]) -> dict[int, object]:
        answers = {}
        for nid, req in requests.items():
            try:
                wire.send(conns[nid], req)
            except OSError:
                continue
        for nid in requests:
            try:
                answers[nid] = wire.recv(conns[nid])["answer"]
            except (OSError, ConnectionError, ValueError):
                conns.pop(nid).close()  # dropped: never asked again this round
        return answers

    try:
        pks = ask({nid: {"stage": "setup", "cfg": cfg.__dict__, "neighbours": coord.graph[nid]} for nid in conns})
        offered = coord.public_keys(pks)
        inbox = coord.route(ask({nid: {"stage": "share_keys", "public": offered[nid]} for nid in offered}))
        masked = ask({nid: {"stage": "masked_input", "sealed": inbox[nid]} for nid in inbox})
        if observe is not None:
            observe["masked"] = dict(masked)
        requests = coord.collect(masked)
        shares = ask({nid: {"stage": "unmask", "alive": a, "dropped": d} for nid, (a, d) in requests.items()})
        mean, weight = coord.unmask(shares)
        for nid in list(conns):
            try:
                wire.send(conns[nid], {"stage": "done", "survivors": coord.survivors})
            except OSError:
                pass
        return mean, weight, coord.survivors
    finally:
        for sock in conns.values():
            sock.close()


def participate(host: str, port: int, nid: int, update: np.ndarray, weight: int = 1,
                leave_before: str | None = None, timeout: float = 60.0) -> list[int] | None:
    """Take part in one round; ``leave_before`` names a stage at which to drop out (for tests
    of recovery: the process closes its socket there, as a crash would)."""
    sock = socket.create_connection((host, port), timeout=timeout)
    try:
        wire.send(sock, {"id": nid})
        me = None
        while True:
            req = wire.recv(sock)
            stage = req["stage"]
            if stage == leave_before:
                return None
            if stage == "setup":
                me = Participant(nid, Config(**req["cfg"]))
                answer = me.setup(req["neighbours"])
            elif stage == "share_keys":
                answer = me.share_keys(req["public"])
            elif stage == "masked_input":
                answer = me.masked_input(req["sealed"], update, weight)
            elif stage == "unmask":
                answer = me.unmask(req["alive"], req["dropped"])
            elif stage == "done":
                return req["survivors"]
            else:
                raise ValueError(f"unknown stage {stage!r} from the coordinator")
            wire.send(sock, {"answer": answer})
    finally:
        sock.close()
