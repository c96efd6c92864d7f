"""The app-facing handle: ``TorchNativeAPI().deploy(model)`` receives the system's events."""

from .deployment import EVENTS, Deployment, TorchNativeAPI

__all__ = ["TorchNativeAPI", "Deployment", "EVENTS"]
