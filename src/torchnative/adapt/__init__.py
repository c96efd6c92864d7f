"""Test-time adaptation over a delta: ``adapt.wrap(model, method=adapt.Tent())``."""

from .eata import EATA, ETA
from .method import Method, softmax_entropy
from .norm import NormStats
from .sar import SAR
from .tent import Tent
from .wrap import Adapted, wrap

__all__ = ["wrap", "Adapted", "Method", "NormStats", "Tent", "EATA", "ETA", "SAR",
           "softmax_entropy"]
