"""The Python binding: argument parsing, call recipes, Tensor methods and torch functions
(generated and hand-written), ``Tensor.__getitem__``/``__setitem__`` and ``__torch_function__``."""
