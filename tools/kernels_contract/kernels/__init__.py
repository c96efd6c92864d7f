"""``kernels``: the Hugging Face kernels contract as torchnative implements it (see
``torchnative.kernels``). Kernels come from a bundle built ahead of time; nothing is downloaded."""

from torchnative.kernels import *  # noqa: F401,F403
from torchnative.kernels import __all__, __version__  # noqa: F401
