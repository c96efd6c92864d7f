"""torchnative: the real PyTorch (upstream 2.13.0, unmodified) on a pure-Python torch._C over numpy."""

__version__ = "0.1.0"

# Our torch._C is this package's subpackage, so this runs whenever our torch is imported: the
# hook (standard library only) then registers torchvision's operators when torchvision is imported.
from torchnative.ecosystem.hook import install as _install_ecosystem_hook

_install_ecosystem_hook()
del _install_ecosystem_hook
