"""stft (SpectralOps.cpp), CompositeImplicitAutograd as upstream writes it: frames of n_fft
samples every hop_length (a strided view), times the window (centred and zero-padded to n_fft
when shorter), one _fft_r2c (one-sided by default for real input) or _fft_c2c per frame,
normalized by 1/sqrt(n_fft) when asked, then (freq, frames). torch.stft's center padding is done
by upstream's Python before it reaches here. align_to_window=True is refused by name.
"""

from __future__ import annotations

from ..core.refuse import TorchnativeNotImplementedError
from ..dispatch.call import call
from ..ops.kernel_registry import kernel

_BY_ROOT_N, _NONE = 1, 0  # fft_norm_mode


def _desc(t) -> str:
    return f"{t._dtype._cpp_name}Type{list(t._size)}".replace(" ", "")


@kernel("stft", composite=True)
def stft(self, n_fft, hop_length=None, win_length=None, window=None, normalized=False,
         onesided=None, return_complex=None, align_to_window=None):
    complex_in = self._dtype.is_complex or (window is not None and window._dtype.is_complex)
    want_complex = complex_in if return_complex is None else return_complex
    if not want_complex and return_complex is None:
        raise RuntimeError("stft requires the return_complex parameter be given for real inputs, "
                           "and will further require that return_complex=True in a future "
                           "PyTorch release.")
    if align_to_window:
        raise TorchnativeNotImplementedError("stft with align_to_window=True",
                                             "torchnative frames the signal from its start only")
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    x = self if self.dim() != 1 else call("unsqueeze", self, 0)
    if x.dim() != 2:
        raise RuntimeError(f"stft: expected a 1D or 2D tensor, but got {self.dim()}D tensor")
    batch, length = x._size
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(f"stft: expected 0 < n_fft <= {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(f"stft: expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(f"stft: expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window._size[0] != win):
        raise RuntimeError(f"stft: expected a 1D window tensor of size equal to win_length={win}, "
                           f"but got window with size {list(window._size)}")
    w = window
    if win < n_fft:  # the window centred in n_fft zeros
        left = (n_fft - win) // 2
        base = window if window is not None else x
        w = call("zeros", [n_fft], dtype=base._dtype, device=base.device)
        part = call("narrow", w, 0, left, win)
        if window is not None:
            call("copy_", part, window)
        else:
            call("fill_.Scalar", part, 1)
    frames = 1 + (length - n_fft) // hop
    st = x.stride()
    x = call("as_strided", x, [batch, frames, n_fft], [st[0], hop * st[1], st[1]])
    if w is not None:
        x = call("mul.Tensor", x, w)
    sided = (not x._dtype.is_complex) if onesided is None else onesided
    norm = _BY_ROOT_N if normalized else _NONE
    if x._dtype.is_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = call("_fft_c2c", x, [x.dim() - 1], norm, True)
    else:
        out = call("_fft_r2c", x, [x.dim() - 1], norm, sided)
    out = call("transpose.int", out, 1, 2)
    if self.dim() == 1:
        out = call("squeeze.dim", out, 0)
    return out if want_complex else call("view_as_real", out)
