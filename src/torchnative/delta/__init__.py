"""Weight deltas over base weights, whose lifetime is their type (see delta.py, lifetime.py)."""

from . import select
from .delta import (Delta, FederatedDelta, PersistentDelta, RequestDelta, SessionDelta,
                    deepcopy_nbytes, state_nbytes)
from .lifetime import FEDERATED, PERSISTENT, REQUEST, SESSION, Lifetime, LifetimeError
from .select import MissingLayer
from .store import DeltaFileError

__all__ = ["Delta", "SessionDelta", "RequestDelta", "PersistentDelta", "FederatedDelta",
           "Lifetime", "LifetimeError", "DeltaFileError", "MissingLayer", "select",
           "REQUEST", "SESSION", "PERSISTENT", "FEDERATED", "deepcopy_nbytes", "state_nbytes"]
