"""torchnative: the real PyTorch (upstream 2.13.0, unmodified) on a pure-Python torch._C over numpy."""

__version__ = "0.1.0"
