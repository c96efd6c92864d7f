"""The operator model: native_functions.yaml expanded, schemas and their JIT types, the Python
spellings table, dispatch keys, the operator registry and the table of our own kernels."""
