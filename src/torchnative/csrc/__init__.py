"""torch._C's implementation, in layers (docs/architecture.md): platform, random, core,
serialization, ops, dispatch, kernels, autograd, python, distributed, surface. A module imports
its own layer and the layers below it; upper layers install themselves into lower ones at import
(tests/unit/test_layers.py holds the contract)."""
