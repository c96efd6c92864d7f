"""The intra-op thread count a process starts with, against upstream's, each side in its own
process under the same environment: MKL's rule on upstream's x86 build (MKL_NUM_THREADS, else
the first of OMP_NUM_THREADS's list, else the physical cores in the affinity mask; a request
capped at those cores unless MKL_DYNAMIC is false; invalid and non-positive values ignored).
The count decides where upstream's loops cut their elements into chunks (sums, SIMD tails), so
a different count is different bits. Before, ours took OMP_NUM_THREADS as given or the logical
CPUs, and an invalid OMP_NUM_THREADS stopped `import torch`."""

from __future__ import annotations

import pytest

import sides
from torchnative.testing import upstream

PROGRAM = r"""
out = {"threads": torch.get_num_threads()}
print(json.dumps(out))
"""

UNSET = {"MKL_NUM_THREADS": "", "OMP_NUM_THREADS": "", "MKL_DYNAMIC": ""}
CASES = [{}, {"MKL_NUM_THREADS": "1"}, {"OMP_NUM_THREADS": "1"},
         {"MKL_NUM_THREADS": "1", "OMP_NUM_THREADS": "3"}, {"OMP_NUM_THREADS": "3"},
         {"OMP_NUM_THREADS": "8"}, {"OMP_NUM_THREADS": "0"}, {"OMP_NUM_THREADS": "abc"},
         {"OMP_NUM_THREADS": "1,2"}, {"OMP_NUM_THREADS": " 1"}, {"OMP_NUM_THREADS": "-1"},
         {"MKL_NUM_THREADS": "abc", "OMP_NUM_THREADS": "1"},
         {"MKL_DYNAMIC": "FALSE", "OMP_NUM_THREADS": "3"},
         {"MKL_DYNAMIC": "0", "OMP_NUM_THREADS": "3"},
         {"MKL_DYNAMIC": "false", "MKL_NUM_THREADS": "5", "OMP_NUM_THREADS": "3"}]


@pytest.mark.parametrize("env", CASES, ids=lambda e: ",".join(f"{k}={v}" for k, v in e.items())
                         or "unset")
def test_start_thread_count_agrees(env):
    ours, up = upstream.run_both(sides.program(PROGRAM), env={**UNSET, **env})
    assert ours == up, (env, ours, up)
