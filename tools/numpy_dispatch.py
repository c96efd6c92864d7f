"""Which of numpy's float64 math loops give the C library's bits on this CPU.

    .venv/bin/python tools/numpy_dispatch.py
    NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL" .venv/bin/python tools/numpy_dispatch.py

numpy picks each ufunc's loop for the CPU at import (its baseline loops call the C library).
Prints, per function, the loop in force and how many of 100,001 inputs differ from glibc's
result (Python's ``math``, which calls it); the second command shows an AVX2 machine's loops on an
AVX-512 one. csrc/platform/libm_arrays.py is what ours calls where the C library's bits matter.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.introspect import opt_func_info

X = np.linspace(-30, 30, 100001)
DOMAIN = {"log": np.abs(X) + 1e-3, "log2": np.abs(X) + 1e-3, "log10": np.abs(X) + 1e-3,
          "log1p": np.abs(X), "arccos": X / 30.0001, "arcsin": X / 30.0001,
          "arctanh": X / 30.0001, "arccosh": np.abs(X) + 1, "exp": X * 20, "expm1": X * 20,
          "cosh": X * 20, "sinh": X * 20}
PY = {"arccos": "acos", "arcsin": "asin", "arctan": "atan", "arctanh": "atanh", "arcsinh": "asinh",
      "arccosh": "acosh"}


def main() -> None:
    print("| function | numpy's float64 loop | inputs differing from glibc (of 100,001) |")
    print("|---|---|---:|")
    for name in ("exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "arccos",
                 "arcsin", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh",
                 "cbrt"):
        x = DOMAIN.get(name, X)
        ours = getattr(np, name)(x)
        ref = np.array([getattr(math, PY.get(name, name))(v) for v in x.tolist()])
        loop = opt_func_info(func_name=f"^{name}$").get(name, {}).get("dd", {}).get("current", "?")
        print(f"| {name} | {loop} | {int((ours != ref).sum())} |")
    base = np.abs(X) + 0.5
    ref = np.array([math.pow(v, 1.7) for v in base.tolist()])
    loop = opt_func_info(func_name="^power$")["power"]["ddd"]["current"]
    print(f"| power (x^1.7) | {loop} | {int((np.power(base, 1.7) != ref).sum())} |")


if __name__ == "__main__":
    main()
