"""A deployed model and the system events that decide its deltas' lifetimes.

``TorchNativeAPI(store).deploy(model, user=...)`` returns a :class:`Deployment`. The app opens
deltas on it (or wraps it with an adaptation method) and forwards the system's events:

==============  ================  ===============  =======================  ==============
event           per-request       per-session      persistent per-user      federated
==============  ================  ===============  =======================  ==============
background      reverted          reverted         saved, kept              saved, kept
foreground      (nothing)         (nothing)        (nothing)                (nothing)
user_switch     reverted          reverted         saved, then unloaded;    saved, then unloaded;
                                                   the new user's loaded    the new user's loaded
sync_window     (nothing)         (nothing)        (nothing: never sent)    offset sent
shutdown        reverted          reverted         saved, then unloaded     saved, then unloaded
==============  ================  ===============  =======================  ==============

After ``shutdown`` the model holds its base weights bit for bit; a new process deploying the same
model for the same user gets that user's persistent and federated deltas back from the store.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..delta import (Delta, FederatedDelta, PersistentDelta, RequestDelta, SessionDelta)
from ..delta.lifetime import FEDERATED, REQUEST, SESSION

KINDS = {"request": RequestDelta, "session": SessionDelta, "persistent": PersistentDelta,
         "federated": FederatedDelta}
SAVED = (PersistentDelta, FederatedDelta)
EVENTS = ("background", "foreground", "user_switch", "sync_window", "shutdown")


def default_store() -> Path:
    root = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(root) / "torchnative" / "deltas"


class TorchNativeAPI:
    def __init__(self, store: str | os.PathLike | None = None):
        self.store = Path(store) if store else default_store()

    def deploy(self, model, *, user: str = "default", name: str = "model") -> "Deployment":
        return Deployment(self, model, user=user, name=name)


class Deployment:
    def __init__(self, api: TorchNativeAPI, model, *, user: str, name: str):
        self.api, self.model, self.name = api, model, name
        self.user = str(user)
        self.deltas: list[Delta] = []   # bottom to top
        self.wrappers = []              # adapt.Adapted whose deltas this deployment renews
        self.shut = False
        self.log: list[tuple[str, str]] = []  # (event, what happened), for the app and tests
        self._load_user()

    # ------------------------------------------------------------------ deltas
    def top(self) -> Delta | None:
        return self.deltas[-1] if self.deltas else None

    def delta(self, kind: str, names) -> Delta:
        """Open a delta of lifetime ``kind`` (request, session, persistent, federated) on top."""
        self._check()
        cls = _kind(kind)
        kw = {"user": self.user} if cls in SAVED else {}
        d = cls(self.model, names, parent=self.top(), **kw)
        self.deltas.append(d)
        return d

    def wrap(self, method, kind: str = "session"):
        """adapt.wrap over a delta of lifetime ``kind`` stacked on this deployment's deltas."""
        from ..adapt import Adapted

        self._check()
        cls = _kind(kind)
        kw = {"user": self.user} if cls in SAVED else {}
        a = Adapted(self.model, method, delta_type=cls, parent=self.top(), **kw)
        self.deltas.append(a.delta)
        self.wrappers.append(a)
        return a

    def path(self, cls, user: str | None = None) -> Path:
        who = hashlib.sha256((user or self.user).encode()).hexdigest()[:16]
        return self.api.store / f"{self.name}.{who}.{cls.lifetime.name.split()[0]}.safetensors"

    # ------------------------------------------------------------------ events
    def background(self):
        self._check()
        self._drop(lambda d: d.lifetime in (REQUEST, SESSION), "background")
        self._save("background")
        self._renew_wrappers()

    def foreground(self):
        self._check()
        self.log.append(("foreground", "nothing to do"))

    def user_switch(self, user: str):
        self._check()
        self._drop(lambda d: d.lifetime in (REQUEST, SESSION), "user_switch")
        self._save("user_switch")
        self._drop(lambda d: True, "user_switch", unload=True)
        self.user = str(user)
        self._load_user()
        self._renew_wrappers()

    def sync_window(self, send):
        """Hand every federated delta's offset to ``send(user, offsets)``; returns how many."""
        self._check()
        n = 0
        for d in self.deltas:
            if d.lifetime is FEDERATED:
                send(self.user, d.export())
                n += 1
        self.log.append(("sync_window", f"{n} federated delta(s) sent"))
        return n

    def shutdown(self):
        if self.shut:
            return
        self._drop(lambda d: d.lifetime in (REQUEST, SESSION), "shutdown")
        self._save("shutdown")
        self._drop(lambda d: True, "shutdown", unload=True)
        self.wrappers = []
        self.shut = True

    # ------------------------------------------------------------------ internals
    def _check(self):
        if self.shut:
            raise RuntimeError("this deployment was shut down")

    def _drop(self, which, event, unload=False):
        for d in reversed(list(self.deltas)):
            if not which(d):
                continue
            if unload:
                d.close()  # saved already: taking it off the model is not discarding it
            else:
                d.discard()  # refuses, naming the lifetime, for anything not discardable
            self.deltas.remove(d)
            self.log.append((event, f"{d.lifetime.name} delta {'unloaded' if unload else 'reverted'}"))

    def _renew_wrappers(self):
        """A wrapper whose delta left the model adapts on, over a delta of the same lifetime: the
        one just loaded for the user if it covers the same tensors, else a fresh one on top."""
        for w in self.wrappers:
            if w.delta in self.deltas:
                continue
            cls = type(w.delta)
            same = [d for d in self.deltas if type(d) is cls and d.names == w.delta.names]
            if same:
                w.delta = same[0]
                continue
            kw = {"user": self.user} if cls in SAVED else {}
            w.delta = cls(self.model, w.delta.names, parent=self.top(), **kw)
            self.deltas.append(w.delta)

    def _save(self, event):
        self.api.store.mkdir(parents=True, exist_ok=True)
        for d in self.deltas:
            if isinstance(d, SAVED):
                d.save(self.path(type(d), d.user))
                self.log.append((event, f"{d.lifetime.name} delta saved"))

    def _load_user(self):
        for cls in SAVED:
            p = self.path(cls)
            if p.exists():
                d = cls.load(self.model, p, user=self.user, parent=self.top())
                self.deltas.append(d)
                self.log.append(("load", f"{cls.lifetime.name} delta of this user loaded"))


def _kind(kind: str):
    try:
        return KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown delta lifetime {kind!r}; choose from {', '.join(KINDS)}") from None
