"""``Mode``: what a kernel is selected for (the contract's flag, with its two exclusions)."""

from enum import Flag, auto


class Mode(Flag):
    _NONE = 0
    FALLBACK = auto()
    TRAINING = auto()
    INFERENCE = auto()
    TORCH_COMPILE = auto()

    def __or__(self, other: "Mode") -> "Mode":
        union = super().__or__(other)
        if Mode.INFERENCE in union and Mode.TRAINING in union:
            raise ValueError("Mode.INFERENCE and Mode.TRAINING are mutually exclusive.")
        if Mode.FALLBACK in union and union != Mode.FALLBACK:
            raise ValueError("Mode.FALLBACK cannot be combined with other modes.")
        return union


# For a requested mode, the registered modes to try, best first.
MODE_FALLBACK_PRIORITY = {
    Mode.INFERENCE: [Mode.INFERENCE, Mode.INFERENCE | Mode.TORCH_COMPILE, Mode.TRAINING,
                     Mode.TRAINING | Mode.TORCH_COMPILE, Mode.FALLBACK],
    Mode.TRAINING: [Mode.TRAINING, Mode.TRAINING | Mode.TORCH_COMPILE, Mode.FALLBACK],
    Mode.INFERENCE | Mode.TORCH_COMPILE: [Mode.INFERENCE | Mode.TORCH_COMPILE,
                                          Mode.TRAINING | Mode.TORCH_COMPILE, Mode.FALLBACK],
    Mode.TRAINING | Mode.TORCH_COMPILE: [Mode.TRAINING | Mode.TORCH_COMPILE, Mode.FALLBACK],
}


def select_repository(repositories: dict, *, mode: Mode):
    """The repository registered for the best mode matching ``mode``, with that mode, or None."""
    if mode not in MODE_FALLBACK_PRIORITY:
        raise ValueError(f"Unsupported mode: {mode}")
    for candidate in MODE_FALLBACK_PRIORITY[mode]:
        if candidate in repositories:
            return repositories[candidate], candidate
    return None
