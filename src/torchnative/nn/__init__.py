"""Training across devices. ``from torchnative.nn import federated`` (federated learning).

Submodules are imported on demand so that ``import torchnative.nn`` pulls in nothing more.
"""
