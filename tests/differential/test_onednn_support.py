"""What oneDNN computes natively on this CPU, against upstream torch 2.13.0 in separate processes
under each CPU profile this machine can run (ONEDNN_MAX_CPU_ISA moves the answer on an AVX-512
CPU): the mkldnn::_is_mkldnn_*_supported queries, and the backend choice they make for
bfloat16/float16 convolutions, seen in convolution_backward's answer to a mask without the
weight (oneDNN's backend computes the weight gradient with the bias gradient and returns it; the
slow kernels return none). Ours answered "supported" for both types everywhere before: the mask
case failed on a CPU without AVX-512, and the queries were refused."""

from __future__ import annotations

import sides

PROGRAM = r"""
mk = torch.ops.mkldnn
out = {"bf16": mk._is_mkldnn_bf16_supported(), "fp16": mk._is_mkldnn_fp16_supported(),
       "acl": mk._is_mkldnn_acl_supported()}
torch.manual_seed(0)
for dt in (torch.bfloat16, torch.float16, torch.float32):
    x, w = torch.randn(2, 3, 8, 8).to(dt), torch.randn(4, 3, 3, 3).to(dt)
    g = torch.randn(2, 4, 8, 8).to(dt)
    r = torch.ops.aten.convolution_backward(g, x, w, [4], [1, 1], [1, 1], [1, 1], False, [0, 0],
                                            1, [True, False, True])
    out[str(dt)] = [None if t is None else list(t.shape) for t in r]
print(json.dumps(out))
"""

results = sides.under_each_profile(PROGRAM)


def test_queries_and_the_backend_they_choose_agree(results):
    ours, up = results
    assert ours == up
    # the answers are the CPU's: the float32 case takes oneDNN here on every CPU (a control that
    # the mask case tells the backends apart)
    assert up["torch.float32"][1] == [4, 3, 3, 3]
    assert (up["torch.bfloat16"][1] is not None) == up["bf16"]
    assert (up["torch.float16"][1] is not None) == up["fp16"]
