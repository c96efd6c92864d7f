"""The import hook: registers torchvision's operators when torchvision asks for them.

torchvision decides whether its operators exist by whether its compiled ``_C`` loads
(``torchvision/extension.py``: ``torch.ops.load_library`` then ``_has_ops``). On our torch that
library cannot load (it links libtorch), and neither can PyPI's build on upstream's CPU torch (it
links libtorch_cuda). So when ``torchvision.extension`` has run and found no compiled library, this
hook defines the ``torchvision::`` operators in Python (``torchvision_ops.register``) and makes
``_has_ops`` answer whether those operators are now defined. torchvision's own files are untouched;
its meta and autograd registrations, which follow in its ``__init__``, then find the operators.
Where the compiled library did load, the hook does nothing.

Standard library only at import: the hook is installed as ``torchnative`` is imported (which our
``torch._C`` does), long before torch itself is usable.
"""

import importlib.abc
import importlib.machinery
import sys

TARGET = "torchvision.extension"


def _after_extension(module) -> None:
    if module._has_ops():
        return
    from torchnative.ecosystem import torchvision_ops

    torchvision_ops.register()
    module._has_ops = torchvision_ops.registered


class _Finder(importlib.abc.MetaPathFinder):
    """Finds ``torchvision.extension`` as the path finder would and wraps its execution."""

    def find_spec(self, name, path=None, target=None):
        if name != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _after_extension(module)

        spec.loader.exec_module = exec_module
        return spec


def install() -> None:
    """Install the hook (idempotent). If torchvision's extension module was already imported
    without it, register now."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
    module = sys.modules.get(TARGET)
    if module is not None:
        _after_extension(module)
