"""Errors the contract raises by name. A kernel the bundle does not hold is a
``FileNotFoundError`` (the contract's "cannot load", which ``kernelize`` may fall back on);
a bundle that does not verify, or holds a build for another system, is never fallen back on."""


class KernelNotInBundleError(FileNotFoundError):
    """The bundle holds no build of this kernel repository (or not at this version/revision)."""


class KernelDigestError(RuntimeError):
    """A bundled kernel's files differ from the digests recorded when the bundle was built."""


class KernelVariantError(RuntimeError):
    """The bundle's build of a kernel was made for another system (torch version, backend,
    CPU or OS) than the one loading it."""


class BundleError(RuntimeError):
    """The bundle itself is missing or malformed."""
