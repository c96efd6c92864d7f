"""Forward-mode AD (torch.autograd.forward_ad): levels, tangents on tensors, and the door's
forward-AD entry, installed while a level is active (the door asks nothing otherwise)."""

from ...dispatch.door import set_forward_ad as _set
from . import levels
from .dispatch import forward_dispatch as _entry

levels._HOOK[0] = lambda: _set(_entry)
levels._HOOK[1] = lambda: _set(None)
