"""Recurrent layers and cells (RNN.cpp, mkldnn/RNN.cpp): the CompositeImplicitAutograd cells
rnn_tanh_cell, rnn_relu_cell, lstm_cell and gru_cell and the layers lstm, gru, rnn_tanh,
rnn_relu (.input and packed .data), written with the operators upstream's C++ calls (so autograd
and modes see them), and the oneDNN LSTM layer mkldnn_rnn_layer with its backward
mkldnn_rnn_layer_backward.

The layers are ours rather than upstream's Python decompositions because those never apply the
dropout between layers (their condition ``num_layers < i - 1`` is never true) while upstream's
C++ does. As upstream's CPU build, a float32/bfloat16 LSTM without projections and with
mkldnn enabled runs each layer and direction through ``mkldnn_rnn_layer``; other layers run
step by step, the input projection of every step one matrix product (RNN.cpp's FullLayer).
The oneDNN layer here computes the same recurrence, gates = x W_ih^T + h W_hh^T + (b_ih + b_hh)
in PyTorch's gate order (input, forget, cell, output), the input projection of every step one
matrix product. It computes in float64 and rounds once: oneDNN's float32 sums run in an order of
their own, and the wide sums keep ours within upstream's own float32 error of the exact answer.
Its workspace is empty, as upstream's meta function gives it; the backward recomputes the gates
from the saved inputs instead.
"""

from __future__ import annotations

import numpy as np

from ..core import dtypes as D
from ..core.grad_mode import is_grad_enabled
from ..platform import cpu_capability
from .support.common import arr, opmath, wrap
from ..dispatch.call import call
from ..ops.kernel_registry import kernel

_B = D.BY_NAME
_LSTM_MODE = 2  # ideep::rnn_kind::LSTM, the only mode upstream's CPU kernel implements


# ---- the cells (CompositeImplicitAutograd) --------------------------------------------------

def _check_input(input, input_size):
    if input.size(1) != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected "
                           f"{input_size}")


def _check_hidden(input, hx, hidden_size, label):
    if input.size(0) != hx.size(0):
        raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{label} batch "
                           f"size {hx.size(0)}")
    if hx.size(1) != hidden_size:
        raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.size(1)}, "
                           f"expected {hidden_size}")


def _simple_cell(input, hx, w_ih, w_hh, b_ih, b_hh, nonlinearity):
    _check_input(input, w_ih.size(1))
    _check_hidden(input, hx, w_hh.size(1), 0)
    # SimpleCell: linear_hh(hidden) + linear_ih(input), then the nonlinearity
    gates = call("add_.Tensor", call("linear", hx, w_hh, b_hh), call("linear", input, w_ih, b_ih))
    return call(nonlinearity, gates)


@kernel("rnn_tanh_cell", composite=True)
def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _simple_cell(input, hx, w_ih, w_hh, b_ih, b_hh, "tanh")


@kernel("rnn_relu_cell", composite=True)
def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    return _simple_cell(input, hx, w_ih, w_hh, b_ih, b_hh, "relu")


@kernel("lstm_cell", composite=True)
def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    hidden_size = w_hh.size(1)
    _check_input(input, w_ih.size(1))
    _check_hidden(input, hx[0], hidden_size, 0)
    _check_hidden(input, hx[1], hidden_size, 1)
    gates = call("add_.Tensor", call("linear", hx[0], w_hh, b_hh),
                 call("linear", input, w_ih, b_ih))
    i, f, g, o = call("unsafe_chunk", gates, 4, 1)
    # out of place where upstream works in place on the chunks: our autograd treats
    # unsafe_chunk's outputs as views, which refuse in-place updates
    i, f, g, o = call("sigmoid", i), call("sigmoid", f), call("tanh", g), call("sigmoid", o)
    cy = call("add_.Tensor", call("mul.Tensor", f, hx[1]), call("mul.Tensor", i, g))
    hy = call("mul.Tensor", o, call("tanh", cy))
    return hy, cy


@kernel("gru_cell", composite=True)
def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    _check_input(input, w_ih.size(1))
    _check_hidden(input, hx, w_hh.size(1), 0)
    ir, ii, in_ = call("unsafe_chunk", call("linear", input, w_ih, b_ih), 3, 1)
    hr, hi, hn = call("unsafe_chunk", call("linear", hx, w_hh, b_hh), 3, 1)
    reset = call("sigmoid", call("add.Tensor", hr, ir))  # out of place: see lstm_cell
    update = call("sigmoid", call("add.Tensor", hi, ii))
    new = call("tanh", call("add.Tensor", in_, call("mul.Tensor", hn, reset)))
    # (hidden - new) * update + new, in GRUCell's order of operations
    return call("add_.Tensor", call("mul_.Tensor", call("sub.Tensor", hx, new), update), new)


# ---- the layers (CompositeImplicitAutograd) ------------------------------------------------

def _step(kind, ig, h, c, w_hh, b_hh, w_hr):
    """One step of a cell whose input projection ``ig`` is already computed (pre_compute_input)."""
    if kind == "gru":
        ir, ii, in_ = call("unsafe_chunk", ig, 3, 1)
        hr, hi, hn = call("unsafe_chunk", call("linear", h, w_hh, b_hh), 3, 1)
        reset = call("sigmoid", call("add.Tensor", hr, ir))
        update = call("sigmoid", call("add.Tensor", hi, ii))
        new = call("tanh", call("add.Tensor", in_, call("mul.Tensor", hn, reset)))
        return call("add.Tensor", call("mul.Tensor", call("sub.Tensor", h, new), update), new), c
    gates = call("add.Tensor", call("linear", h, w_hh, b_hh), ig)
    if kind != "lstm":
        return call(kind, gates), c
    i, f, g, o = call("unsafe_chunk", gates, 4, 1)
    c = call("add.Tensor", call("mul.Tensor", call("sigmoid", f), c),
             call("mul.Tensor", call("sigmoid", i), call("tanh", g)))
    h = call("mul.Tensor", call("sigmoid", o), call("tanh", c))
    if w_hr is not None:
        h = call("matmul", h, call("t", w_hr))
    return h, c


def _layer(kind, x, batch_sizes, h0, c0, p, reverse):
    """One direction of one layer over time-major ``x`` (packed rows when ``batch_sizes``):
    (output, final h, final c). Packed sequences shrink the batch as sequences end (forward)
    or grow it from the initial state (reverse), as RNN.cpp's PackedLayer does."""
    w_ih, w_hh, b_ih, b_hh, w_hr = p
    xs = call("linear", x, w_ih, b_ih)
    if batch_sizes is None:
        steps = list(call("unbind.int", xs, 0))
        sizes = [h0.size(0)] * len(steps)
    else:
        sizes = list(batch_sizes)
        steps = list(call("split_with_sizes", xs, sizes, 0))
    order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
    outs: list = [None] * len(steps)
    h, c = h0, c0
    done_h: list = []
    done_c: list = []
    bs = sizes[order[0]] if reverse else h0.size(0)
    if reverse:
        h = call("narrow", h0, 0, 0, bs)
        c = None if c0 is None else call("narrow", c0, 0, 0, bs)
    for t in order:
        n = sizes[t]
        if n < bs:  # forward: sequences ended; keep their final state
            done_h.append(call("narrow", h, 0, n, bs - n))
            h = call("narrow", h, 0, 0, n)
            if c is not None:
                done_c.append(call("narrow", c, 0, n, bs - n))
                c = call("narrow", c, 0, 0, n)
        elif n > bs:  # reverse: sequences start; take their initial state
            h = call("cat", [h, call("narrow", h0, 0, bs, n - bs)], 0)
            if c is not None:
                c = call("cat", [c, call("narrow", c0, 0, bs, n - bs)], 0)
        bs = n
        h, c = _step(kind, steps[t], h, c, w_hh, b_hh, w_hr)
        outs[t] = h
    out = call("cat" if batch_sizes is not None else "stack", outs, 0)
    if done_h:
        h = call("cat", [h] + done_h[::-1], 0)
        if c is not None:
            c = call("cat", [c] + done_c[::-1], 0)
    return out, h, c


def _use_mkldnn(kind, input, has_projections):
    """RNN.cpp's use_mkldnn: float32 always; bfloat16 and half only where oneDNN computes them
    natively (half only outside grad mode). Elsewhere upstream runs the generic layer, rounding
    every operation to the input's dtype, and so does ours."""
    import torch

    if kind != "lstm" or has_projections or input.numel() == 0:
        return False
    if not torch._C._get_mkldnn_enabled():
        return False
    dt = input._dtype
    return (dt is _B["float32"] or (dt is _B["bfloat16"] and cpu_capability.ONEDNN_BF16)
            or (dt is _B["float16"] and cpu_capability.ONEDNN_FP16 and not is_grad_enabled()))


def _mkldnn_layer(x, h0, c0, p, reverse, has_biases, train):
    w_ih, w_hh, b_ih, b_hh, _ = p
    if not has_biases:  # mkldnn_rnn passes zeros shaped like the weights when there are none
        b_ih = call("zeros_like", w_ih)
        b_hh = call("zeros_like", w_hh)
    hidden = h0.size(-1)
    out, hy, cy, _ = call("mkldnn_rnn_layer", x, w_ih, w_hh, b_ih, b_hh,
                          call("unsqueeze", h0, 0), call("unsqueeze", c0, 0), reverse, [], 2,
                          hidden, 1, has_biases, False, False, train)
    return out, call("squeeze.dim", hy, 0), call("squeeze.dim", cy, 0)


def _rnn(kind, x, batch_sizes, hx, cx, params, has_biases, num_layers, dropout, train,
         bidirectional, batch_first):
    if batch_first and batch_sizes is None:
        x = call("transpose.int", x, 0, 1)
    dirs = 2 if bidirectional else 1
    per = (4 if has_biases else 2) + (1 if kind == "lstm" and cx.size(2) != hx.size(2) else 0)
    if len(params) != per * num_layers * dirs:
        raise RuntimeError(f"{kind}: expected {per * num_layers * dirs} parameters, got "
                           f"{len(params)}")
    projections = per in (3, 5)
    mkldnn = batch_sizes is None and _use_mkldnn(kind, x, projections)
    if mkldnn:
        x = call("contiguous", x)
    hs, cs = [], []
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            idx = layer * dirs + d
            w = list(params[idx * per:(idx + 1) * per])
            p = (w[0], w[1], w[2] if has_biases else None, w[3] if has_biases else None,
                 w[-1] if projections else None)
            h0 = call("select.int", hx, 0, idx)
            c0 = None if cx is None else call("select.int", cx, 0, idx)
            if mkldnn:
                out, h, c = _mkldnn_layer(x, h0, c0, p, d == 1, has_biases, train)
            else:
                out, h, c = _layer(kind, x, batch_sizes, h0, c0, p, d == 1)
            outs.append(out)
            hs.append(h)
            cs.append(c)
        x = outs[0] if dirs == 1 else call("cat", outs, -1)
        if dropout != 0 and train and layer < num_layers - 1:
            x = call("dropout", x, dropout, True)
    if batch_first and batch_sizes is None:
        x = call("transpose.int", x, 0, 1)
    hy = call("stack", hs, 0)
    return x, hy, (None if cx is None else call("stack", cs, 0))


@kernel("lstm.input", composite=True)
def lstm_input(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
               batch_first):
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    return _rnn("lstm", input, None, hx[0], hx[1], params, has_biases, num_layers, dropout,
                train, bidirectional, batch_first)


@kernel("lstm.data", composite=True)
def lstm_data(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
              bidirectional):
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    return _rnn("lstm", data, _sizes(batch_sizes), hx[0], hx[1], params, has_biases, num_layers,
                dropout, train, bidirectional, False)


def _sizes(batch_sizes):
    return [int(v) for v in arr(batch_sizes).reshape(-1)]


def _one_hidden(kind):
    def on_input(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
                 batch_first):
        out, hy, _ = _rnn(kind, input, None, hx, None, params, has_biases, num_layers, dropout,
                          train, bidirectional, batch_first)
        return out, hy

    def on_data(data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
                bidirectional):
        out, hy, _ = _rnn(kind, data, _sizes(batch_sizes), hx, None, params, has_biases,
                          num_layers, dropout, train, bidirectional, False)
        return out, hy

    return on_input, on_data


for _kind, _name in (("gru", "gru"), ("tanh", "rnn_tanh"), ("relu", "rnn_relu")):
    _in, _data = _one_hidden(_kind)
    kernel(f"{_name}.input", composite=True)(_in)
    kernel(f"{_name}.data", composite=True)(_data)


# ---- the oneDNN LSTM layer --------------------------------------------------------------------

def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _time_major(a, batch_first):
    return np.swapaxes(a, 0, 1) if batch_first else a


def _layer_inputs(input, w0, w1, w2, w3, hx_, cx_, reverse, mode, has_biases, batch_first,
                  wide=False):
    """Inputs as time-major opmath arrays (float64 when ``wide``), the step order applied
    (reverse flips time)."""
    if mode != _LSTM_MODE:
        raise RuntimeError(f"mkldnn_rnn_layer: only the LSTM mode ({_LSTM_MODE}) is "
                           f"implemented on CPU, got mode {mode}")
    dt = input._dtype
    if dt not in (_B["float32"], _B["bfloat16"], _B["float16"]):
        raise RuntimeError(f"mkldnn_rnn_layer: expected a float, bfloat16 or half input, got "
                           f"{dt._cpp_name}")
    cd = np.dtype(np.float64) if wide else opmath(dt)
    x = _time_major(arr(input), batch_first).astype(cd, copy=False)
    if reverse:
        x = x[::-1]
    w_ih, w_hh = arr(w0).astype(cd, copy=False), arr(w1).astype(cd, copy=False)
    bias = None
    if has_biases:
        bias = arr(w2).astype(cd, copy=False) + arr(w3).astype(cd, copy=False)
    h0 = arr(hx_).reshape(x.shape[1], -1).astype(cd, copy=False)
    c0 = arr(cx_).reshape(x.shape[1], -1).astype(cd, copy=False)
    return dt, x, w_ih, w_hh, bias, h0, c0


def _run(x, w_ih, w_hh, bias, h0, c0, keep):
    """The recurrence over time; with ``keep`` also every step's gates and cell state."""
    steps, batch = x.shape[0], x.shape[1]
    hidden = w_hh.shape[1]
    xg = (x.reshape(steps * batch, -1) @ w_ih.T).reshape(steps, batch, 4 * hidden)
    if bias is not None:
        xg = xg + bias
    out = np.empty((steps, batch, hidden), xg.dtype)
    gates = np.empty((steps, batch, 4 * hidden), xg.dtype) if keep else None
    cells = np.empty((steps, batch, hidden), xg.dtype) if keep else None
    h, c = h0, c0
    for t in range(steps):
        g = xg[t] + h @ w_hh.T
        i, f = _sigmoid(g[:, :hidden]), _sigmoid(g[:, hidden:2 * hidden])
        gg, o = np.tanh(g[:, 2 * hidden:3 * hidden]), _sigmoid(g[:, 3 * hidden:])
        c = f * c + i * gg
        h = o * np.tanh(c)
        out[t] = h
        if keep:
            gates[t] = np.concatenate([i, f, gg, o], axis=1)
            cells[t] = c
    return out, h, c, gates, cells


def _result(a, dt, reverse, batch_first):
    if reverse:
        a = a[::-1]
    return wrap(np.ascontiguousarray(_time_major(a, batch_first)), dt)


@kernel("mkldnn_rnn_layer")
def mkldnn_rnn_layer(input, weight0, weight1, weight2, weight3, hx_, cx_, reverse, batch_sizes,
                     mode, hidden_size, num_layers, has_biases, bidirectional, batch_first,
                     train):
    # in float64, rounded once (as the backward): oneDNN's float32 sums run in another order
    dt, x, w_ih, w_hh, bias, h0, c0 = _layer_inputs(input, weight0, weight1, weight2, weight3,
                                                    hx_, cx_, reverse, mode, has_biases,
                                                    batch_first, wide=True)
    out, h, c, _, _ = _run(x, w_ih, w_hh, bias, h0, c0, keep=False)
    hy = wrap(np.ascontiguousarray(h.reshape(hx_._size)), hx_._dtype)
    cy = wrap(np.ascontiguousarray(c.reshape(cx_._size)), cx_._dtype)
    workspace = wrap(np.empty(0, np.uint8), _B["uint8"])
    return _result(out, dt, reverse, batch_first), hy, cy, workspace


@kernel("mkldnn_rnn_layer_backward")
def mkldnn_rnn_layer_backward(input, weight1, weight2, weight3, weight4, hx_, cx_tmp, output,
                              hy_, cy_, grad_output, grad_hy, grad_cy, reverse, mode,
                              hidden_size, num_layers, has_biases, train, bidirectional,
                              batch_sizes, batch_first, workspace):
    # in float64, rounded once: oneDNN's float32 sums run in another order than numpy's, and
    # summing wide keeps ours within upstream's own float32 error of the exact gradient
    dt, x, w_ih, w_hh, bias, h0, c0 = _layer_inputs(input, weight1, weight2, weight3, weight4,
                                                    hx_, cx_tmp, reverse, mode, has_biases,
                                                    batch_first, wide=True)
    out, _, _, gates, cells = _run(x, w_ih, w_hh, bias, h0, c0, keep=True)
    steps, batch, hidden = out.shape
    cd = out.dtype
    gout = np.zeros_like(out)
    if grad_output is not None:
        gout = _time_major(arr(grad_output), batch_first).astype(cd, copy=False)
        if reverse:
            gout = gout[::-1]
    dh = (np.zeros((batch, hidden), cd) if grad_hy is None
          else arr(grad_hy).reshape(batch, hidden).astype(cd, copy=False))
    dc = (np.zeros((batch, hidden), cd) if grad_cy is None
          else arr(grad_cy).reshape(batch, hidden).astype(cd, copy=False))
    dgates = np.empty_like(gates)
    for t in range(steps - 1, -1, -1):
        i, f = gates[t, :, :hidden], gates[t, :, hidden:2 * hidden]
        g, o = gates[t, :, 2 * hidden:3 * hidden], gates[t, :, 3 * hidden:]
        c_prev = cells[t - 1] if t > 0 else c0
        tc = np.tanh(cells[t])
        dh = dh + gout[t]
        dc = dc + dh * o * (1 - tc * tc)
        dgates[t] = np.concatenate([dc * g * i * (1 - i), dc * c_prev * f * (1 - f),
                                    dc * i * (1 - g * g), dh * tc * o * (1 - o)], axis=1)
        dh = dgates[t] @ w_hh
        dc = dc * f
    flat = dgates.reshape(steps * batch, 4 * hidden)
    h_prev = np.concatenate([h0[None], out[:-1]], axis=0).reshape(steps * batch, hidden)
    grad_w_ih = flat.T @ x.reshape(steps * batch, -1)
    grad_w_hh = flat.T @ h_prev
    grad_b = flat.sum(axis=0)
    grad_x = (flat @ w_ih).reshape(steps, batch, -1)
    wdt = weight1._dtype
    if has_biases:
        grad_b3, grad_b4 = wrap(grad_b, wdt), wrap(grad_b.copy(), wdt)
    else:  # the biases took no part: their gradients are zeros of their own shapes
        grad_b3 = wrap(np.zeros(tuple(weight3._size), cd), weight3._dtype)
        grad_b4 = wrap(np.zeros(tuple(weight4._size), cd), weight4._dtype)
    return (_result(grad_x, dt, reverse, batch_first), wrap(grad_w_ih, wdt),
            wrap(grad_w_hh, wdt), grad_b3, grad_b4,
            wrap(np.ascontiguousarray(dh.reshape(hx_._size)), hx_._dtype),
            wrap(np.ascontiguousarray(dc.reshape(cx_tmp._size)), cx_tmp._dtype))
