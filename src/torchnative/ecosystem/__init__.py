"""Third-party libraries on torch: what a library's compiled extension would have supplied,
written as plain torch code and registered through ``torch.library``.

Nothing here imports ``torchnative._C``; it runs on upstream torch as on ours. ``hook`` is the
import hook that registers a library's operators when that library is imported.
"""

from torchnative.ecosystem.hook import install

__all__ = ["install"]
