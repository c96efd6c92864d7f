"""Recurrent layers and cells against upstream torch 2.13.0, in a separate process.

nn.LSTM/GRU/RNN in their modes (layers, bidirectional, batch_first, proj_size, packed sequences,
train with dropout between layers, eval under no_grad — the oneDNN layer upstream's CPU build
runs — gradients of input and every parameter, a double backward) and the cells
(RNNCell tanh/relu, LSTMCell, GRUCell: batched, unbatched, without bias, their shape errors).
Judged by the kernel golden harness (``kernel_golden``): tolerances derived from upstream's own
float32-vs-float64 error per family.
"""

from __future__ import annotations

import textwrap

import pytest

from kernel_golden import golden_suite

CASES: list = []


def case(name, family, expr, setup="", *flags):
    CASES.append((name, family, textwrap.dedent(setup), expr, list(flags)))


def module(ctor):
    """A module built from upstream's bit-exact generator, in the case's float dtype."""
    return f"T.manual_seed(0); m = T.nn.{ctor}.to(mk.dt('float32'))\n"


PARAMS_GRADS = "grads(lambda x, *ps: m(x), x, *m.parameters())"

# the oneDNN LSTM layer: eval under no_grad, and training where the first layer's input does not
# require grad (upstream's decomposition then also routes the layer through mkldnn_rnn_layer)
for kind in ("LSTM", "GRU", "RNN"):
    fam = kind.lower()
    case(f"{fam}_eval", fam, "m.eval()(x)",
         module(f"{kind}(4, 6, 2)") + "x = mk.randn(5, 3, 4)", "nograd")
    case(f"{fam}_eval_bidir_batch_first", fam, "m.eval()(x, h)",
         module(f"{kind}(4, 5, 2, bidirectional=True, batch_first=True)") +
         "x = mk.randn(3, 7, 4)\n" +
         ("h = (mk.randn(4, 3, 5), mk.randn(4, 3, 5))" if kind == "LSTM" else
          "h = mk.randn(4, 3, 5)"), "nograd")
    case(f"{fam}_eval_unbatched", fam, "m.eval()(x)",
         module(f"{kind}(4, 6, 1)") + "x = mk.randn(5, 4)", "nograd")
    case(f"{fam}_grad_params", fam, PARAMS_GRADS,
         module(f"{kind}(4, 6, 2)") + "x = mk.randn(5, 3, 4)")
    case(f"{fam}_grad_input_bidir", fam, PARAMS_GRADS,
         module(f"{kind}(4, 5, 2, bidirectional=True)") + "x = mk.randn(6, 2, 4).requires_grad_()")
    case(f"{fam}_grad_no_bias_batch_first", fam, PARAMS_GRADS,
         module(f"{kind}(3, 4, 1, bias=False, batch_first=True)") + "x = mk.randn(2, 5, 3)")
    case(f"{fam}_packed", fam,
         "grads(lambda x, *ps: T.nn.utils.rnn.pad_packed_sequence(m(T.nn.utils.rnn.pack_padded_sequence("
         "x, [5, 3, 2], enforce_sorted=False))[0])[0], x, *m.parameters())",
         module(f"{kind}(4, 6, 2, bidirectional=True)") + "x = mk.randn(5, 3, 4)")
    case(f"{fam}_dropout_train", fam, PARAMS_GRADS,
         module(f"{kind}(4, 6, 3, dropout=0.4)") + "x = mk.randn(5, 3, 4)\nT.manual_seed(1)")

case("pack_pad_roundtrip", "packing",
     "grads(lambda x: T.nn.utils.rnn.pad_packed_sequence(T.nn.utils.rnn.pack_padded_sequence("
     "x, [4, 2, 1], batch_first=True), batch_first=True, padding_value=-1.5, total_length=6), x)",
     "x = mk.randn(3, 5, 2).requires_grad_()")
case("pack_unsorted_refused", "packing", "T.nn.utils.rnn.pack_padded_sequence(x, [1, 3])",
     "x = mk.randn(3, 2, 2)")
case("pack_sequence", "packing", "T.nn.utils.rnn.pack_sequence([a, b], enforce_sorted=False)",
     "a = mk.randn(2, 3); b = mk.randn(4, 3)")
case("lstm_proj", "lstm", PARAMS_GRADS, module("LSTM(4, 6, 2, proj_size=3)") + "x = mk.randn(5, 3, 4)")
case("lstm_proj_eval", "lstm", "m.eval()(x)",
     module("LSTM(4, 6, 2, proj_size=3, bidirectional=True)") + "x = mk.randn(5, 3, 4)", "nograd")
case("lstm_eval_bfloat16", "lstm_bf16", "m.eval()(x)",
     "T.manual_seed(0); m = T.nn.LSTM(4, 6, 2).to(T.bfloat16)\n"
     "x = mk.randn(5, 3, 4, dtype='bfloat16')", "nograd", "exact")
case("lstm_double_backward", "lstm",
     "T.autograd.grad((T.autograd.grad(m(x)[0].pow(2).sum(), m.weight_hh_l0, create_graph=True)[0]"
     ".pow(2)).sum(), [m.weight_ih_l0, m.bias_hh_l0])",
     module("LSTM(3, 4, 1)") + "x = mk.randn(4, 2, 3)")
case("lstm_rnn_layer_op", "lstm",
     "T.ops.aten.mkldnn_rnn_layer(x, w0, w1, b0, b1, h, c, True, [], 2, 5, 1, True, False, False, False)[:3]",
     "x = mk.randn(4, 3, 2); w0 = mk.randn(20, 2); w1 = mk.randn(20, 5); b0 = mk.randn(20)\n"
     "b1 = mk.randn(20); h = mk.randn(1, 3, 5); c = mk.randn(1, 3, 5)", "nograd")

for cell, hid in (("RNNCell(4, 6)", "h"), ("RNNCell(4, 6, nonlinearity='relu')", "h"),
                  ("LSTMCell(4, 6)", "(h, c)"), ("GRUCell(4, 6)", "h")):
    name = cell.split("(")[0].lower() + ("_relu" if "relu" in cell else "")
    hs = "h = mk.randn(3, 6); c = mk.randn(3, 6)\n"
    case(f"{name}", "cell", f"grads(lambda x, *ps: m(x, {hid}), x, *m.parameters())",
         module(cell) + hs + "x = mk.randn(3, 4).requires_grad_()")
    case(f"{name}_unbatched_default_hidden", "cell", "grads(lambda x, *ps: m(x), x, *m.parameters())",
         module(cell) + "x = mk.randn(4)")
    case(f"{name}_no_bias_eval", "cell", f"m(x, {hid})",
         module(cell[:-1] + ", bias=False)") + hs + "x = mk.randn(3, 4)", "nograd")
    case(f"{name}_bad_input_size", "cell", f"m(x, {hid})",
         module(cell) + hs + "x = mk.randn(3, 5)")
    case(f"{name}_bad_batch", "cell", f"m(x, {hid})", module(cell) + hs + "x = mk.randn(2, 4)")
case("lstmcell_bad_hidden1", "cell", "m(x, (h, c))",
     module("LSTMCell(4, 6)") + "h = mk.randn(3, 6); c = mk.randn(3, 7); x = mk.randn(3, 4)")
# forward traces: the operators upstream's C++ cell calls, in its order (compared for the simple
# cells only: the LSTM and GRU cells compute out of place where upstream updates unsafe_chunk's
# outputs in place, see nn_rnn.py)
case("rnn_tanh_cell_op", "cell", "T.rnn_tanh_cell(x, h, w0, w1)",
     "x = mk.randn(2, 3); h = mk.randn(2, 4); w0 = mk.randn(4, 3); w1 = mk.randn(4, 4)", "trace")
case("rnn_relu_cell_trace", "cell", "m(x, h)",
     module("RNNCell(3, 4, nonlinearity='relu')") + "x = mk.randn(2, 3); h = mk.randn(2, 4)",
     "trace", "nograd")


_G, golden, test_agrees_with_upstream = golden_suite(CASES, "rnn_golden")


def test_a_wrong_gate_order_is_caught(golden):
    """Control: the comparison rejects an LSTM whose forget and input gates are swapped."""
    doc, _ = golden
    name = "lstm_eval"
    c = next(x for x in CASES if x[0] == name)
    swap = c[2] + ("w = m.weight_ih_l0.data; w[:6], w[6:12] = w[6:12].clone(), w[:6].clone()\n")
    ours, arrays = _G.ours((name, c[1], swap, c[3], c[4]))
    with pytest.raises(AssertionError):
        _G.compare(golden, c[1], doc[name]["low"], ours, arrays, doc[name]["high"])
