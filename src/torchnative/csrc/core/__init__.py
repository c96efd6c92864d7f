"""c10 values and tensors: dtypes, devices, layouts, sizes, storage, TensorBase, grad mode,
and building tensors. Above only `random` (the mt19937 engine): it imports no other layer (see
docs/architecture.md)."""

# python_data installs torch.Tensor(...)'s constructor into TensorBase, which sits below it
from . import python_data  # noqa: E402,F401
