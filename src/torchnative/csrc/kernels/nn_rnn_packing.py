"""Packed sequences (PackedSequence.cpp): _pack_padded_sequence (its gradient is
_pack_padded_sequence_backward, from derivatives.yaml) and _pad_packed_sequence, the operators
behind ``nn.utils.rnn.pack_padded_sequence`` / ``pad_packed_sequence``.

A packed sequence is time-major: step t holds the first batch_sizes[t] sequences (sorted by
decreasing length), all steps concatenated along dim 0.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from .support.common import arr, wrap
from ..dispatch.call import call
from ..ops.kernel_registry import kernel

_LONG = D.BY_NAME["int64"]


def _check_lengths(t, what="'lengths'"):
    if not (t.dim() == 1 and t.device.type == "cpu" and t._dtype is _LONG):
        raise RuntimeError(f"{what} argument should be a 1D CPU int64 tensor, but got "
                           f"{t.dim()}D {t.device.type} {t._dtype._cpp_name} tensor")


@kernel("_pack_padded_sequence")
def pack_padded_sequence(input, lengths, batch_first):
    _check_lengths(lengths)
    x = arr(input)
    if batch_first:
        x = np.swapaxes(x, 0, 1)
    if input.numel() <= 0:
        raise RuntimeError("Cannot pack empty tensors.")
    n = int(x.shape[1])
    lens = arr(lengths)
    if lens.shape[0] != n:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lens.shape[0]} (batch_size={n})")
    if lens[n - 1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if np.any(lens[1:] > lens[:-1]):
        raise RuntimeError("`lengths` array must be sorted in decreasing order when "
                           "`enforce_sorted` is True. You can pass `enforce_sorted=False` to "
                           "pack_padded_sequence and/or pack_sequence to sidestep this "
                           "requirement if you do not need ONNX exportability.")
    steps = int(lens[0])
    sizes = (lens[None, :] > np.arange(steps)[:, None]).sum(axis=1).astype(np.int64)
    data = np.concatenate([x[t, :sizes[t]] for t in range(steps)], axis=0)
    return wrap(np.ascontiguousarray(data), input._dtype), wrap(sizes, _LONG)


@kernel("_pack_padded_sequence_backward", composite=True)
def pack_padded_sequence_backward(grad, input_size, batch_sizes, batch_first):
    size = list(input_size)
    if batch_first:
        size[0], size[1] = size[1], size[0]
    grad_input = call("zeros", size, dtype=grad._dtype, device=grad.device)
    offset = 0
    for t, n in enumerate(int(v) for v in arr(batch_sizes)):
        call("copy_", call("narrow", call("select.int", grad_input, 0, t), 0, 0, n),
             call("narrow", grad, 0, offset, n))
        offset += n
    return call("transpose.int", grad_input, 0, 1) if batch_first else grad_input


@kernel("_pad_packed_sequence", composite=True)
def pad_packed_sequence(data, batch_sizes, batch_first, padding_value, total_length):
    _check_lengths(batch_sizes, "'batch_sizes'")
    sizes = [int(v) for v in arr(batch_sizes)]
    steps = len(sizes)
    length = steps
    if total_length > 0:
        if total_length < steps:
            raise RuntimeError("Expected total_length to be at least the length of the longest "
                               f"sequence in input, but got total_length={total_length} and max "
                               f"sequence length being {steps}")
        length = total_length
    out = call("new_full", data, [length, sizes[0]] + list(data._size[1:]), padding_value)
    offset = 0
    for t, n in enumerate(sizes):
        call("copy_", call("narrow", call("select.int", out, 0, t), 0, 0, n),
             call("narrow", data, 0, offset, n))
        offset += n
    # sequence j lasts as many steps as have more than j sequences
    lengths = (np.asarray(sizes)[None, :] > np.arange(sizes[0])[:, None]).sum(axis=1)
    if batch_first:
        out = call("transpose.int", out, 0, 1)
    return out, wrap(lengths.astype(np.int64), _LONG)
