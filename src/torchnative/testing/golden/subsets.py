"""Named selections of OpInfo entries. ``fast`` runs in CI; ``full`` is the documented sweep."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import ClassVar

# Core ops a transformer forward touches, plus the shape/index ops around them (OpInfo names; an
# entry with variants, like div or max, brings all of them).
FAST_OPS = (
    "add", "sub", "mul", "div", "neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "tanh", "sigmoid",
    "pow", "maximum", "clamp", "eq", "lt", "where", "masked_fill",
    "sum", "mean", "amax", "max", "argmax", "cumsum", "softmax", "log_softmax", "sort", "topk",
    "matmul", "mm", "bmm", "addmm", "nn.functional.linear", "nn.functional.relu", "nn.functional.gelu",
    "nn.functional.silu", "nn.functional.layer_norm",
    "cat", "stack", "reshape", "view", "expand", "transpose", "permute", "squeeze", "unsqueeze",
    "index_select", "gather", "tril", "zeros_like", "full_like",
)


@dataclass(frozen=True)
class Suite:
    # where its cases live (.cache/golden/<prefix><name>) and the sources their fingerprint reads
    CACHE_PREFIX: ClassVar[str] = ""
    SOURCES: ClassVar[tuple] = ("codec.py", "calls.py", "naming.py", "generate.py", "live.py")

    name: str
    ops: tuple[str, ...] = ()       # empty: every OpInfo entry
    dtypes: tuple[str, ...] = ()    # empty: every dtype the op supports on CPU (capped)
    max_dtypes: int = 6
    max_samples: int = 0            # per op and dtype, evenly spread; 0: every sample
    seed: int = 0

    def params(self) -> dict:
        return asdict(self)


SUITES = {
    "fast": Suite("fast", FAST_OPS, ("float32", "int64"), max_samples=12),
    "full": Suite("full"),
}
