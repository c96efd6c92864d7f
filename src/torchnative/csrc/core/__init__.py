"""c10 values and tensors: dtypes, devices, layouts, sizes, storage, TensorBase, grad mode,
and building tensors. Above only `random` (the mt19937 engine): it imports no other layer (see
docs/architecture.md)."""
