"""The running backward pass's thread-local state (upstream's current GraphTask).

The engine sets it around each pass; nodes read it while they run (the node that made a new
node under anomaly mode, the set of nodes a partial pass executes). It lives apart from the
engine so that the nodes, below the engine, can read it.
"""

from __future__ import annotations

import threading


class _TLS(threading.local):
    def __init__(self):
        self.needed = None  # set of nodes to execute in the current pass (None: all)
        self.depth = 0
        self.callbacks = None
        self.task_id = -1  # the running graph task (-1: none)
        self.node = None  # the node being executed
        self.graph = None  # nodes reachable in the running task


TLS = _TLS()
