"""Test-time adaptation over a delta: ``adapt.wrap(model, method=adapt.Tent())``."""

from .cotta import CoTTA
from .eata import EATA, ETA
from .lame import LAME
from .memo import MEMO
from .method import Method, softmax_entropy
from .norm import NormStats
from .rotta import RoTTA
from .sar import SAR
from .tent import Tent
from .tlm import TLM
from .ttt import TTT
from .wrap import Adapted, wrap

__all__ = ["wrap", "Adapted", "Method", "NormStats", "Tent", "EATA", "ETA", "SAR", "CoTTA",
           "RoTTA", "LAME", "MEMO", "TTT", "TLM", "softmax_entropy"]
