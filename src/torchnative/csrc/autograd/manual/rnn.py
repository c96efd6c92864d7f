"""FunctionsManual.cpp's recurrent-layer helper: the differentiable backward of the oneDNN LSTM
layer, used when a gradient graph is being built (create_graph)."""

from __future__ import annotations

from ..cpp_shims import _torch


def _lstm_layer(input, w_ih, w_hh, b_ih, b_hh, h, c, reverse, has_biases, batch_first):
    """The layer's forward in differentiable operators (mkldnn_rnn_layer's recurrence)."""
    torch = _torch()
    x = input.transpose(0, 1) if batch_first else input
    h, c = h[0], c[0]
    steps = range(x.size(0) - 1, -1, -1) if reverse else range(x.size(0))
    out = [None] * x.size(0)
    for t in steps:
        gates = torch.nn.functional.linear(x[t], w_ih, b_ih if has_biases else None) + \
            torch.nn.functional.linear(h, w_hh, b_hh if has_biases else None)
        i, f, g, o = gates.chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        out[t] = h
    y = torch.stack(out, 0)
    return (y.transpose(0, 1) if batch_first else y), h.unsqueeze(0), c.unsqueeze(0)


def mkldnn_rnn_layer_differentiable_backward(input, weight0, weight1, weight2, weight3, hx_, cx_,
                                             output, hy_, cy_, grad_output, grad_hy, grad_cy,
                                             reverse, mode, hidden_size, num_layers, has_biases,
                                             train, bidirectional, batch_sizes, batch_first,
                                             workspace):
    # The layer recomputed from the saved inputs, then differentiated with create_graph: the
    # gradients are themselves functions of the inputs, as the double backward needs.
    torch = _torch()
    inputs = (input, weight0, weight1, weight2, weight3, hx_, cx_)
    with torch.enable_grad():
        leaves = [t if t.requires_grad else t.detach().requires_grad_() for t in inputs]
        outs = _lstm_layer(*leaves[:5], leaves[5], leaves[6], reverse, has_biases, batch_first)
        pairs = [(o, g) for o, g in zip(outs, (grad_output, grad_hy, grad_cy)) if g is not None]
        grads = torch.autograd.grad([o for o, _ in pairs], leaves, [g for _, g in pairs],
                                    create_graph=True, allow_unused=True)
    return tuple(torch.zeros_like(t) if g is None else g for t, g in zip(inputs, grads))
