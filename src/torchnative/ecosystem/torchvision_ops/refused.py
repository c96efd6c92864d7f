"""Operators of torchvision's compiled library that have no Python kernel here: called, they
raise naming themselves (torchvision still imports, since its meta registrations only need the
schemas to exist)."""


def refuse(name: str):
    def kernel(*args, **kwargs):
        raise NotImplementedError(
            f"torchvision::{name} is not implemented by torchnative.ecosystem.torchvision_ops "
            "(torchvision's compiled library cannot load on this torch)")

    kernel.__name__ = name
    return kernel
