"""Lifetimes: the three questions a delta's type answers.

May the system discard it on its own (backgrounding, user switch)?  Does it survive a restart
(saved to the device's storage)?  May it leave the device (be sent to a server)?  An operation a
lifetime forbids raises :class:`LifetimeError` naming the lifetime.
"""

from __future__ import annotations

from dataclasses import dataclass


class LifetimeError(PermissionError):
    """A delta was asked to do what its lifetime forbids."""


@dataclass(frozen=True)
class Lifetime:
    name: str
    discardable: bool        # the system may drop it (background, user switch) without asking
    survives_restart: bool   # it may be written to storage and read back by a new process
    leaves_device: bool      # it may be exported for transmission
    dropped_on: frozenset    # system events that revert it

    def forbid(self, what: str, allowed: bool) -> None:
        if not allowed:
            raise LifetimeError(f"a {self.name} delta may not {what} (its lifetime forbids it)")


REQUEST = Lifetime("per-request", True, False, False,
                   frozenset({"request_end", "background", "user_switch", "shutdown"}))
SESSION = Lifetime("per-session", True, False, False,
                   frozenset({"background", "user_switch", "shutdown"}))
# A user's own adaptation: saved when the app leaves the foreground or shuts down, unloaded (after
# saving) when another user takes the device, never dropped silently.
PERSISTENT = Lifetime("persistent per-user", False, True, False, frozenset())
# What federated learning sends: the one lifetime whose offset may leave the device.
FEDERATED = Lifetime("federated", False, True, True, frozenset())

ALL = {lt.name: lt for lt in (REQUEST, SESSION, PERSISTENT, FEDERATED)}
