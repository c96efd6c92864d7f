"""The door every operator call passes (``door.aten_dispatch``), the boxed-call convention,
in-place and out= overloads derived from functional kernels, Python dispatch, and ``call``: an
operator by name."""
