"""FunctionsManual.cpp helpers for FFTs (the kernels that compute them live in kernels/spectral.py)."""

from __future__ import annotations



def fft_r2c_backward(*a):
    from ...kernels.spectral import fft_r2c_backward as f

    return f(*a)


def fft_c2r_backward(*a):
    from ...kernels.spectral import fft_c2r_backward as f

    return f(*a)
