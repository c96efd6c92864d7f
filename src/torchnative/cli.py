"""The ``torchnative`` command: ``chat`` (the main job), ``embed``, ``info``."""

from __future__ import annotations

import argparse
import sys

# The main job: a chat with SmolLM2 on our torch.
DEFAULT_COMMAND = "chat"
EXIT_USAGE = 2
EXIT_REFUSED = 3


def info(args) -> int:
    """Where torch and torch._C come from, the surface counts, and a small computation."""
    import torch

    from torchnative import census

    print(f"torch {torch.__version__} from {torch.__file__}")
    print(f"torch._C from {torch._C.__file__}")
    t = census.totals(census.census())
    print(f"torch._C surface: {t['implemented']} implemented, {t['refusing']} refusing by name, "
          f"{t['absent']} absent")
    a = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    b = torch.ones(3, 2)
    print("a @ b =", (a @ b).tolist())
    return 0


def chat(args) -> int:
    from torchnative.apps.chat import DEFAULT_PROMPT, chat as run_chat

    prompt = DEFAULT_PROMPT if args.prompt is None else " ".join(args.prompt)
    stats = run_chat(prompt, model_dir=args.model_dir, gguf_file=args.gguf_file,
                     max_new_tokens=args.max_new_tokens, temperature=args.temperature,
                     top_k=args.top_k, top_p=args.top_p, seed=args.seed)
    print(f"[load {stats['load_s']:.1f} s, time to first token "
          f"{stats['time_to_first_token_s']:.2f} s, {stats['new_tokens']} tokens at "
          f"{stats['tokens_per_s']:.1f} tokens/s]", file=sys.stderr)
    return 0


def embed(args) -> int:
    from torchnative.apps.embed import DEFAULT_SENTENCES, embed as run_embed

    sentences = args.sentences or DEFAULT_SENTENCES
    _, sims = run_embed(sentences, args.model_dir)
    for i, s in enumerate(sentences):
        print(f"[{i}] {s}")
    print("cosine similarity:")
    for i, row in enumerate(sims.tolist()):
        print(f"[{i}] " + "  ".join(f"{v:6.3f}" for v in row))
    return 0


def adapt(args) -> int:
    from torchnative.adapt.bench import main_cli

    try:
        return main_cli(args)
    except ValueError as e:
        print(f"torchnative adapt: {e}", file=sys.stderr)
        return EXIT_USAGE


def federated(args) -> int:
    from torchnative.nn.federated.experiment import cli_main

    return cli_main(args.federated_args)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="torchnative",
                                 description="The real PyTorch on a pure-Python torch._C.")
    sub = ap.add_subparsers(dest="command")
    p = sub.add_parser("chat", help="chat with SmolLM2-135M-Instruct")
    p.add_argument("prompt", nargs="*", default=None,
                   help="what to ask (default: 'What is the capital of France?')")
    p.add_argument("--max-new-tokens", type=int, default=64)
    p.add_argument("--temperature", type=float, default=0.0,
                   help="0 decodes greedily; above 0 samples (seeded, bit-exact with upstream)")
    p.add_argument("--top-k", type=int, default=50)
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--model-dir", default=None, help="a model directory (default: SmolLM2)")
    p.add_argument("--gguf-file", default=None, help="GGUF file inside --model-dir")
    p.set_defaults(fn=chat)
    p = sub.add_parser("embed", help="sentence similarities with all-MiniLM-L6-v2")
    p.add_argument("sentences", nargs="*")
    p.add_argument("--model-dir", default=None)
    p.set_defaults(fn=embed)
    p = sub.add_parser("info", help="where torch comes from, surface counts, a computation")
    p.set_defaults(fn=info)
    p = sub.add_parser("adapt", help="the digits-C test-time adaptation benchmark (error table)")
    p.add_argument("--methods", default="source,norm,tent,eta,eata,sar")
    p.add_argument("--settings", default="reset,continual,mixed,label")
    p.add_argument("--corruptions", default="", help="comma-separated (default: all 15)")
    p.add_argument("--severity", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--arch", default="bn", choices=("bn", "gn"))
    p.add_argument("--per-domain", type=int, default=0, help="samples per corruption (default all 597)")
    p.add_argument("--json", default="", help="also write the rows to this file")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(fn=adapt)
    p = sub.add_parser("federated", add_help=False,
                       help="federated digits across participant processes (accuracy per round)")
    p.add_argument("federated_args", nargs=argparse.REMAINDER)
    p.set_defaults(fn=federated)
    return ap


COMMANDS = ("chat", "embed", "info", "adapt", "federated")


def main(argv=None) -> int:
    ap = parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help")):
        argv = [DEFAULT_COMMAND, *argv]  # `torchnative "a question"` chats
    if argv[0] == "federated":  # its options are the experiment's own
        from torchnative.nn.federated.experiment import cli_main
        return cli_main(argv[1:])
    args = ap.parse_args(argv)
    if args.command == "chat" and args.prompt == []:
        args.prompt = None
    from torchnative.apps.chat import UsageError
    from torchnative.csrc.core.refuse import TorchnativeNotImplementedError

    try:
        return args.fn(args)
    except UsageError as e:
        print(f"torchnative {args.command}: {e}", file=sys.stderr)
        return EXIT_USAGE
    except TorchnativeNotImplementedError as e:
        print(f"torchnative {args.command}: refused: {e}", file=sys.stderr)
        return EXIT_REFUSED


if __name__ == "__main__":
    sys.exit(main())
