"""istft (SpectralOps.cpp), CompositeImplicitAutograd as upstream writes it: every frame
inverse-transformed (_fft_c2r, one-sided by default when the frequency axis is not n_fft long, or
_fft_c2c for a complex result; 1/n or 1/sqrt(n) normalisation), times the window (centred in
n_fft zeros when shorter), overlap-added into the signal with unfold_backward, and divided by the
overlap-added squared window (the NOLA envelope), which must stay above 1e-11 on the kept span;
the centre padding is trimmed, and a requested length longer than the signal is zero-padded with
upstream's warning."""

from __future__ import annotations

from ..dispatch.call import call
from ..ops.kernel_registry import kernel
from ..platform.torch_warn import torch_warn

_BY_ROOT_N, _BY_N = 1, 2  # fft_norm_mode
_PAD_WARNING = ("The length of signal is shorter than the length parameter. Result is being "
                "padded with zeros in the tail. Please check your center and hop_length settings.")
_NO_WINDOW = ("A window was not provided. A rectangular window will be applied.Please provide "
              "the same window used by stft to make the inversion lossless.To suppress this "
              "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
              "device=<device>)`.")
_warned: set = set()


def _warn_once(message: str):
    """TORCH_WARN_ONCE: once per process."""
    if message not in _warned:
        _warned.add(message)
        torch_warn(message)


def _b(v) -> str:
    return "1" if v else "0"


def _repr(self, n_fft, hop, win, window, center, normalized, onesided, length, return_complex):
    """The REPR prefix of upstream's messages: the call with its arguments."""
    shape = ", ".join(str(n) for n in self.shape)
    w = "None" if window is None else \
        f"torch.{window._dtype._cpp_name}Tensor{{[{', '.join(str(n) for n in window.shape)}]}}"
    return (f"istft(CPU{self._dtype._cpp_name}Type[{shape}], n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={w}, center={_b(center)}, normalized={_b(normalized)}, "
            f"onesided={'None' if onesided is None else _b(onesided)}, "
            f"length={'None' if length is None else length}, "
            f"return_complex={_b(return_complex)})")


def _as_complex(t):
    """view_as_complex, through a contiguous copy when the strides do not allow the view."""
    st = t.stride()
    viewable = all(s % 2 == 0 for s in st[:-1]) and st[-1] == 1 and t.storage_offset() % 2 == 0
    return call("view_as_complex", t if viewable else call("clone", t))


@kernel("istft", composite=True)
def istft(self, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if window is None:
        _warn_once(_NO_WINDOW)
    rep = _repr(self, n_fft, hop, win, window, center, normalized, onesided, length,
                return_complex)
    if not self._dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    x = call("view_as_real", call("resolve_conj", self))
    dim = x.dim()
    if x.numel() == 0:
        raise RuntimeError(f"{rep} : input tensor cannot be empty.")
    if dim not in (3, 4):
        raise RuntimeError(f"{rep} : expected a tensor with 3 or 4 dimensions, but got {dim}")
    n_frames, fft_size = x.shape[-2], x.shape[-3]
    expected_len = n_fft + hop * (n_frames - 1)
    sided = (fft_size != n_fft) if onesided is None else onesided
    if sided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(f"{rep} : expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{fft_size}")
    if not sided and n_fft != fft_size:
        raise RuntimeError(f"{rep} : expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise RuntimeError(f"{rep} : expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise RuntimeError(f"{rep} : expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise RuntimeError(f"{rep} : Invalid window shape. window has to be 1D and length of "
                           "`win_length`")
    w = window if window is not None else \
        call("ones", [win], dtype=x._dtype, device=x.device)
    if win != n_fft:
        left = (n_fft - win) // 2
        w = call("constant_pad_nd", w, [left, n_fft - win - left], 0)
    if dim == 3:
        x = call("unsqueeze", x, 0)
    x = _as_complex(call("transpose.int", x, 1, 2))  # (channel, n_frames, fft_size)
    norm = _BY_ROOT_N if normalized else _BY_N
    if return_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = call("_fft_c2c", x, [x.dim() - 1], norm, False)
    else:
        if window is not None and window._dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not sided:
            x = call("slice.Tensor", x, -1, 0, n_fft // 2 + 1)
        x = call("_fft_c2r", x, [x.dim() - 1], norm, n_fft)
    y = call("mul.Tensor", x, call("view", w, [1, 1, n_fft]))
    y = call("unfold_backward", y, [y.shape[0], expected_len], 1, n_fft, hop)
    wsq = call("expand", call("pow.Tensor_Scalar", w, 2), [1, n_frames, n_fft])
    envelope = call("unfold_backward", wsq, [1, expected_len], 1, n_fft, hop)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else expected_len
    y = call("slice.Tensor", y, 1, start, end, 1)
    envelope = call("slice.Tensor", envelope, 1, start, end, 1)
    lowest = call("lt.Scalar", call("min", call("abs", envelope)), 1e-11)
    if call("_local_scalar_dense", lowest):
        raise RuntimeError(f"{rep} window overlap add min: 1\n[ CPUBoolType{{}} ]")
    y = call("div.Tensor", y, envelope)
    if dim == 3:
        y = call("squeeze.dim", y, 0)
    if end > expected_len:
        _warn_once(_PAD_WARNING)
        y = call("constant_pad_nd", y, [0, end - expected_len], 0)
    return y
