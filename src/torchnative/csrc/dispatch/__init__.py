"""The door every operator call passes (``door.aten_dispatch``), the boxed-call convention,
in-place and out= overloads derived from functional kernels, Python dispatch, and ``call``: an
operator by name."""

# the door installs itself into ops.dispatcher.DOOR, through which call() and Python dispatch
# reach it: importing any module of this package makes it ready
from . import door  # noqa: E402,F401
