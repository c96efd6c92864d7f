"""Scripted helpers from the test-time adaptation literature, run on whichever torch runs this file.

TorchScript reads source, so this is a file (``-c`` code has none). It prints one JSON document:
for each numeric case, the float32 result and the float64 rerun (``tests/differential/test_jit_script.py``
derives the tolerance from upstream's pair); for each error case, the exception's type and text;
for each descriptive case, strings (names, schemas). The helpers are written for this test.
"""

from __future__ import annotations

import json
import pickle
from typing import Dict, List, Optional, Tuple

import numpy as np
import torch


@torch.jit.script
def softmax_entropy(x: torch.Tensor) -> torch.Tensor:
    """Tent / EATA / SAR: entropy of the softmax prediction, per sample."""
    return -(x.softmax(1) * x.log_softmax(1)).sum(1)


@torch.jit.script
def symmetric_entropy(x, x_ema):
    """CoTTA: cross entropy of student and teacher, both ways, averaged (unannotated: Tensors)."""
    return -0.5 * (x_ema.softmax(1) * x.log_softmax(1)).sum(1) - 0.5 * (
        x.softmax(1) * x_ema.log_softmax(1)).sum(1)


@torch.jit.script
def target_entropy(x, x_ema, softmax_targets: bool = True):
    """Cross entropy against the teacher's prediction, or against given target probabilities."""
    if softmax_targets:
        return -(x_ema.softmax(1) * x.log_softmax(1)).sum(1)
    return -(x_ema * x.log_softmax(1)).sum(1)


@torch.jit.script
def map_entropy(x, x_ema):
    """Segmentation-style: one value for a batch of class maps, normalised by log2(classes)."""
    n, c, h, w = x.shape
    return -(x_ema.softmax(1) * x.log_softmax(1)).sum() / (
        n * h * w * torch.log2(torch.tensor(c, dtype=torch.float)))


@torch.jit.script
def timeliness_weight(ages: torch.Tensor) -> torch.Tensor:
    """RoTTA: older memory-bank samples weigh less."""
    return torch.exp(-ages) / (1 + torch.exp(-ages))


@torch.jit.script
def eata_weights(logits: torch.Tensor, e_margin: float, d_margin: float = 0.05,
                 ema: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """EATA: keep reliable (low entropy) and non-redundant samples, weight by exp(-(H - E0))."""
    ent = softmax_entropy(logits)
    keep = ent < e_margin
    probs = logits.softmax(1)
    if ema is not None:
        cos = torch.nn.functional.cosine_similarity(ema.unsqueeze(0), probs, dim=1)
        keep = keep & (cos.abs() < d_margin)
    weights = torch.exp(-(ent - e_margin)) * keep.to(logits.dtype)
    return weights, probs[keep].mean(0) if bool(keep.any()) else probs.mean(0)


@torch.jit.script
def sar_ema(ema: Optional[float], new_loss: float, momentum: float = 0.9) -> float:
    """SAR: moving average of the loss that decides a model reset."""
    if ema is None:
        return new_loss
    return momentum * ema + (1 - momentum) * new_loss


def plain_python_scale(x: torch.Tensor) -> torch.Tensor:
    return x * 0.5


@torch.jit.script
def control_flow(x: torch.Tensor, steps: int = 3, tol: float = 1e-3) -> torch.Tensor:
    """Loops, branches, augmented assignment, a list and a call into plain Python."""
    parts: List[torch.Tensor] = []
    for i in range(steps):
        if i % 2 == 0:
            x = x - plain_python_scale(x).tanh()
        else:
            x += 0.25
        parts.append(x.sum())
    n = 0
    while bool(x.abs().max() > tol) and n < 50:
        x = x * 0.5
        n += 1
    return torch.stack(parts) + n


@torch.jit.script
def class_counts(labels: List[int], num_classes: int) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for c in range(num_classes):
        counts[str(c)] = 0
    for y in labels:
        counts[str(y)] += 1
    return counts


@torch.jit.script
def type_comment_scale(x, k):
    # type: (Tensor, int) -> Tensor
    return x * k


@torch.jit.script
def string_annotations(x: "torch.Tensor", k: "Optional[int]" = None) -> "List[torch.Tensor]":
    return [x] if k is None else [x] * k


@torch.jit.script
def check_probs(p: torch.Tensor) -> torch.Tensor:
    if bool((p < 0).any()):
        raise ValueError("probabilities must be non-negative")
    assert p.dim() == 2, "a batch of distributions"
    return p / p.sum(1, keepdim=True)


def plain_python_check(x: torch.Tensor) -> torch.Tensor:
    if x.dim() != 2:
        raise RuntimeError("expects a batch of logits")
    return x


@torch.jit.script
def calls_check(x: torch.Tensor) -> torch.Tensor:
    return plain_python_check(x).softmax(1)


@torch.jit.script
def calls_scripted(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    return check_probs(y)


@torch.jit.script
def with_kwonly(x: torch.Tensor, *, scale: float) -> torch.Tensor:
    return x * scale


@torch.jit.script
def takes_tensor(x: torch.Tensor) -> int:
    return 0


@torch.jit.script
def takes_float(x: float) -> float:
    return x


@torch.jit.script
def takes_int(x: int) -> int:
    return x


@torch.jit.script
def takes_bool(x: bool) -> bool:
    return x


@torch.jit.script
def takes_str(x: str) -> str:
    return x


@torch.jit.script
def takes_int_list(x: List[int]) -> List[int]:
    return x


@torch.jit.script
def takes_float_list(x: List[float]) -> List[float]:
    return x


@torch.jit.script
def takes_tensor_list(x: List[torch.Tensor]) -> int:
    return len(x)


@torch.jit.script
def takes_optional_tensor(x: Optional[torch.Tensor]) -> bool:
    return x is None


@torch.jit.script
def takes_optional_int(x: Optional[int]) -> Optional[int]:
    return x


@torch.jit.script
def takes_tuple(x: Tuple[int, float]) -> Tuple[int, float]:
    return x


@torch.jit.script
def takes_dict(x: Dict[str, int]) -> Dict[str, int]:
    return x


TAKERS = [takes_tensor, takes_float, takes_int, takes_bool, takes_str, takes_int_list,
          takes_float_list, takes_tensor_list, takes_optional_tensor, takes_optional_int,
          takes_tuple, takes_dict]


def conversion_cases() -> dict:
    """Each parameter type given each kind of value: what arrives, or the error (toIValue)."""
    values = {"int": 1, "float": 2.5, "bool": True, "str": "a", "None": None,
              "tensor0": torch.tensor(3), "tensor0f": torch.tensor(1.5), "tensor1": torch.ones(2),
              "list_int": [1, 2], "tuple_int": (1, 2), "list_float": [1.0, 2.0],
              "list_mixed": [1, 2.0], "list_tensor": [torch.ones(1)], "dict": {"a": 1},
              "np_int64": np.int64(3), "np_float32": np.float32(0.5), "empty_list": []}
    out = {}
    for fn in TAKERS:
        for name, v in values.items():
            try:
                r = fn(v)
                out[f"{fn.name}({name})"] = {"type": type(r).__name__, "value": repr(r)}
            except Exception as e:  # the test compares what each torch raises
                out[f"{fn.name}({name})"] = {"error": type(e).__name__, "message": str(e)}
    return out


def _data(dtype):
    rng = np.random.default_rng(0)
    logits = torch.from_numpy(rng.standard_normal((16, 10))).to(dtype)
    teacher = torch.from_numpy(rng.standard_normal((16, 10))).to(dtype)
    ages = torch.from_numpy(rng.uniform(0, 8, size=(12,))).to(dtype)
    return logits, teacher, ages


def numeric_cases(dtype) -> dict:
    logits, teacher, ages = _data(dtype)
    w, m = eata_weights(logits, 0.4 * float(np.log(10)) + 1.0)
    w2, m2 = eata_weights(logits, 3.0, 0.9, ema=logits.softmax(1).mean(0))
    leaf = logits.clone().requires_grad_()
    softmax_entropy(leaf).mean().backward()  # Tent's loss: gradients flow through scripted code
    return {
        "entropy_grad": leaf.grad,
        "softmax_entropy": softmax_entropy(logits),
        "symmetric_entropy": symmetric_entropy(logits, teacher),
        "timeliness_weight": timeliness_weight(ages),
        "eata_weights": w, "eata_mean": m, "eata_weights_ema": w2, "eata_mean_ema": m2,
        "control_flow": control_flow(logits[:2]),
        "control_flow_kw": control_flow(x=logits[:2], tol=0.1, steps=4),
        "with_kwonly": with_kwonly(logits[0], scale=2),
        "type_comment": type_comment_scale(logits[0], 3),
        "string_annotations": torch.stack(string_annotations(logits[0], 2)),
        "int_as_float": softmax_entropy(logits * 1) / sar_ema(None, 2),
        "target_entropy": target_entropy(logits, teacher),
        "target_entropy_probs": target_entropy(logits, teacher.softmax(1), softmax_targets=False),
        "map_entropy": map_entropy(logits.reshape(2, 5, 4, 4), teacher.reshape(2, 5, 4, 4)),
        "forked": torch.jit.wait(torch.jit.fork(symmetric_entropy, teacher, x_ema=logits)),
    }


def _error(fn, *args, **kwargs) -> dict:
    try:
        fn(*args, **kwargs)
    except Exception as e:  # the test compares what each torch raises
        return {"type": type(e).__module__ + "." + type(e).__qualname__, "message": str(e)}
    return {"type": None, "message": None}


# Python that TorchScript's frontend rejects (upstream's torch/jit/frontend.py decides)
def uses_lambda(x: torch.Tensor) -> torch.Tensor:
    f = lambda y: y  # noqa: E731
    return f(x)


def uses_varargs(x: torch.Tensor, *rest) -> torch.Tensor:
    return x


def uses_for_else(x: torch.Tensor) -> torch.Tensor:
    for _ in range(2):
        x = x + 1
    else:
        x = x - 1
    return x


def uses_comprehension_if(n: int) -> List[int]:
    return [i for i in range(n) if i]


def uses_try(x: torch.Tensor) -> torch.Tensor:
    try:
        return x
    except RuntimeError:
        return x


def uses_global(x: torch.Tensor) -> torch.Tensor:
    global _G
    return x


def uses_kwargs_expansion(x: torch.Tensor) -> torch.Tensor:
    opts = {"dim": 1}
    return x.softmax(**opts)


def uses_nested_def(x: torch.Tensor) -> torch.Tensor:
    def inner(y):
        return y
    return inner(x)


def uses_fstring_format(x: float) -> str:
    return f"{x:.2f}"


def type_comment_on_def_line(x, k):  # type: (Tensor, int) -> Tensor
    return x


def type_comment_miscounted(x, k):
    # type: (Tensor) -> Tensor
    return x


def mutable_default(x: torch.Tensor, dims: List[int] = [1]) -> torch.Tensor:
    return x


def bad_default(x: torch.Tensor, k: int = 2.5) -> torch.Tensor:
    return x


UNSUPPORTED = [uses_lambda, uses_varargs, uses_for_else, uses_comprehension_if, uses_try,
               uses_global, uses_kwargs_expansion, uses_nested_def, uses_fstring_format, bad_default,
               mutable_default, type_comment_on_def_line, type_comment_miscounted]


def error_cases() -> dict:
    x = torch.ones(2, 3)
    out = {
        "tensor_given_int": _error(softmax_entropy, 1),
        "tensor_given_list": _error(softmax_entropy, [1.0, 2.0]),
        "float_given_str": _error(eata_weights, x, "a"),
        "float_given_tensor": _error(eata_weights, x, torch.ones(2)),
        "optional_float_given_str": _error(sar_ema, "a", 1.0),
        "list_int_given_floats": _error(class_counts, [1.0, 2.0], 3),
        "inferred_tensor_given_int": _error(symmetric_entropy, 1, x),
        "too_many": _error(softmax_entropy, x, x),
        "missing": _error(eata_weights, x),
        "unknown_keyword": _error(softmax_entropy, x, bogus=1),
        "positional_and_keyword": _error(softmax_entropy, x, x=x),
        "kwonly_positional": _error(with_kwonly, x, 2.0),
        "pickle": _error(pickle.dumps, softmax_entropy),
        "runtime_error_inside": _error(control_flow, torch.ones(0, 3, 2).unsqueeze(0), 1, 0.5),
        "raise_inside": _error(check_probs, -torch.ones(2, 2)),
        "assert_inside": _error(check_probs, torch.ones(3)),
        "raise_in_python_callee": _error(calls_check, torch.ones(3)),
        "error_in_scripted_callee": _error(calls_scripted, -torch.ones(2, 2)),
        "wait_not_a_future": _error(torch.jit.wait, 3),
        "fork_raises": _error(torch.jit.fork, softmax_entropy, 1),
    }
    for fn in UNSUPPORTED:
        out["script_" + fn.__name__] = _error(torch.jit.script, fn)
    return out


def describe() -> dict:
    scripted = [softmax_entropy, timeliness_weight, eata_weights, sar_ema, control_flow,
                class_counts, with_kwonly, type_comment_scale, string_annotations]
    out = {f.name: {"qualified_name": f.qualified_name, "schema": str(f.schema)} for f in scripted}
    out["symmetric_entropy"] = {"qualified_name": symmetric_entropy.qualified_name}
    out["again_is_same"] = torch.jit.script(softmax_entropy) is softmax_entropy
    out["type"] = f"{type(softmax_entropy).__module__}.{type(softmax_entropy).__qualname__}"
    out["isinstance"] = isinstance(softmax_entropy, torch.jit.ScriptFunction)
    out["sar_ema_values"] = [sar_ema(None, 2), sar_ema(1.0, 3), sar_ema(ema=1, new_loss=3, momentum=0)]
    out["sar_ema_types"] = [type(v).__name__ for v in out["sar_ema_values"]]
    out["class_counts"] = class_counts((0, 1, 1, 2, 2, 2), 4)
    fut = torch.jit.fork(sar_ema, None, new_loss=4)
    out["fork"] = [type(fut).__name__, fut.done(), torch.jit.wait(fut)]
    return out


def main() -> None:
    low = {k: v.tolist() for k, v in numeric_cases(torch.float32).items()}
    high = {k: v.tolist() for k, v in numeric_cases(torch.float64).items()}
    print(json.dumps({"float32": low, "float64": high, "errors": error_cases(),
                      "describe": describe(), "conversions": conversion_cases()}))


if __name__ == "__main__":
    main()
