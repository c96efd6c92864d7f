"""One process of the architecture sweep (run by tools/arch_sweep.py, on either torch).

``build`` (upstream): for each architecture, a tiny random model from its config (seed 0) is saved
with ``save_pretrained``; its inputs, its float32 output, its float64 rerun's output and its greedy
tokens are written next to it. ``load`` (ours): the saved model is loaded with ``from_pretrained``
and run on the same inputs. One JSON line per architecture on stdout; a failure is reported with
its exception type and first line, and the next architecture goes on.

Usage: python tools/arch_worker.py build|load CACHE_DIR JSON_ENTRIES
"""

from __future__ import annotations

import json
import signal
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from arch_configs import inputs_for, tiny_config  # noqa: E402

NEW_TOKENS = 8
SECONDS_PER_ARCH = 600


def _first_tensor(output):
    import torch

    for key in ("logits", "last_hidden_state", "prediction_logits", "reconstruction"):
        value = getattr(output, key, None)
        if isinstance(value, torch.Tensor):
            return value
    for value in (output.values() if hasattr(output, "values") else output):
        if isinstance(value, torch.Tensor):
            return value
    raise ValueError("the model returned no tensor")


def _run(model, inputs: dict, generates: bool) -> dict:
    import torch

    feed = {k: torch.from_numpy(v) for k, v in inputs.items()}
    dtype = next(model.parameters()).dtype
    feed = {k: v.to(dtype) if v.is_floating_point() else v for k, v in feed.items()}
    out = {}
    with torch.no_grad():
        out["output"] = _first_tensor(model(**feed)).double().numpy()
        if generates:
            gen = {k: v for k, v in feed.items() if k != "decoder_input_ids"}
            pad = model.generation_config.pad_token_id
            pad = 0 if pad is None else pad
            if model.config.is_encoder_decoder:
                start = model.generation_config.decoder_start_token_id
                gen["decoder_start_token_id"] = pad if start is None else start
            tokens = model.generate(**gen, max_new_tokens=NEW_TOKENS, do_sample=False,
                                    pad_token_id=pad)
            out["tokens"] = tokens[0].numpy()
    return out


def _float64(cls, path: Path, inputs: dict):
    """The float64 rerun's output. Grouped GEMMs take no float64, so a mixture-of-experts model
    that fails on them is rerun with transformers' eager experts (a loop of plain matmuls)."""
    try:
        return _run(cls.from_pretrained(path).double().eval(), inputs, False)["output"]
    except RuntimeError as e:
        if "Float32, BFloat16 or Float16" not in str(e):
            raise
    model = cls.from_pretrained(path, experts_implementation="eager").double().eval()
    return _run(model, inputs, False)["output"]


def _timeout(signum, frame):
    raise TimeoutError(f"more than {SECONDS_PER_ARCH} s")


def one(mode: str, cache: Path, arch: str, cls_name: str, generates: bool) -> dict:
    import torch
    import transformers

    path = cache / arch
    cls = getattr(transformers, cls_name)
    if mode == "build":
        path.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(0)
        model = cls(tiny_config(arch)).eval()
        model.save_pretrained(path)
        inputs = inputs_for(model, arch)
        np.savez(path / "inputs.npz", **inputs)
        model = cls.from_pretrained(path).eval()
        result = _run(model, inputs, generates)
        try:
            result["output64"] = _float64(cls, path, inputs)
        except Exception as e:  # the verdict says the tolerance could not be derived
            result["float64_error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
        side = "upstream"
    else:
        with np.load(path / "inputs.npz") as f:
            inputs = {k: f[k] for k in f.files}
        model = cls.from_pretrained(path).eval()
        result = _run(model, inputs, generates)
        side = "ours"
    np.savez(path / f"{side}.npz", **{k: v for k, v in result.items() if isinstance(v, np.ndarray)})
    return {k: v for k, v in result.items() if isinstance(v, str)}


def main() -> None:
    mode, cache, entries = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
    warnings.filterwarnings("ignore")
    import transformers

    transformers.logging.set_verbosity_error()
    signal.signal(signal.SIGALRM, _timeout)
    for arch, cls_name, generates in entries:
        signal.alarm(SECONDS_PER_ARCH)
        try:
            row = {"arch": arch, "ok": True, **one(mode, cache, arch, cls_name, generates)}
        except BaseException as e:  # one architecture's failure is its row, not the sweep's
            if isinstance(e, KeyboardInterrupt):
                raise
            frames = traceback.extract_tb(e.__traceback__)
            where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
            message = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
            row = {"arch": arch, "ok": False, "error": f"{type(e).__name__}: {message}",
                   "where": where}
        finally:
            signal.alarm(0)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
