"""Differential privacy for federated rounds: client-side (local) Gaussian noise, server-side
fixed and adaptive clipping, and an RDP accountant."""

from .accountant import DEFAULT_ORDERS, RDPAccountant, epsilon, rdp
from .client_side import LocalGaussian
from .clipping import clip, l2_norm
from .noise import add_gaussian
from .server_side import AdaptiveClipping, FixedClipping, noisy_mean

__all__ = ["AdaptiveClipping", "DEFAULT_ORDERS", "FixedClipping", "LocalGaussian", "RDPAccountant",
           "add_gaussian", "clip", "epsilon", "l2_norm", "noisy_mean", "rdp"]
