"""torch._C for the unmodified upstream torch tree, in Python over numpy.

Only surface lives in this package: every name here is one upstream's torch._C has. The
implementation lives in ``torchnative.csrc`` (named after upstream's torch/csrc, whose C++ builds
the real _C). Names upstream reads but we do not implement refuse by name (see csrc/surface/refusals.py).
"""

from torchnative.csrc.surface.exports import install as _install

_install(globals())
del _install
