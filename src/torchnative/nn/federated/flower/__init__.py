"""Flower (flwr 1.42) for fleets: an Engine participant as a ``ClientApp``, our aggregators in a
``ServerApp``. Needs the ``federated`` extra."""

from .client import client_app, round_seed
from .records import from_record, to_record
from .server import AggregatorStrategy, server_app

__all__ = ["AggregatorStrategy", "client_app", "from_record", "round_seed", "server_app", "to_record"]
