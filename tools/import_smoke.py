"""Import what the foundation issue lists, on our torch, and report the first failure.

Usage: .venv/bin/python tools/import_smoke.py
"""

import importlib
import sys
import traceback

MODULES = ["torch", "torch.nn", "torch.nn.functional", "torch.optim", "torch.utils.data", "torch.fx",
           "torch.distributions", "torch.utils.checkpoint", "transformers"]
NAMES = ["AutoModelForCausalLM", "AutoTokenizer", "BertModel", "GPT2LMHeadModel", "LlamaForCausalLM"]


def main() -> int:
    try:
        for m in MODULES:
            importlib.import_module(m)
        import transformers

        for n in NAMES:
            getattr(transformers, n)
    except Exception:
        exc = sys.exc_info()[1]
        while exc.__cause__ is not None:
            exc = exc.__cause__
        traceback.print_exception(exc, limit=-6)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
