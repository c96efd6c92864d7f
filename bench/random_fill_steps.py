"""Where our float32 ``normal_`` goes: numpy's MT19937 words against the Box-Muller fill, and the
fill's CPU time per numpy step (every statement of ``normal_fill32``'s chunk loop timed on its
own), for a million values. Ours only: upstream has no such steps.

Usage: .venv/bin/python bench/random_fill_steps.py [--repeats 20] [--top 30]

Statement timing adds two clock reads per statement, so the per-step sum exceeds the
uninstrumented fill; the shares are what to read.
"""

from __future__ import annotations

import argparse
import ast
import collections
import inspect
import statistics
import textwrap
import time

import numpy as np

from torchnative.csrc.random import mt19937, normal_fill32

_STEPS = ("log_grid", "sincos_grid", "fill_from_words", "_z_times_poly")
_spent: collections.Counter = collections.Counter()


def _timed_copy(fn):
    """``fn`` recompiled with every statement of its body (not the loops themselves) timed."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    first = fn.__code__.co_firstlineno - 1

    class Timer(ast.NodeTransformer):
        def generic_visit(self, node):
            super().generic_visit(node)
            for field in ("body", "orelse"):
                body = getattr(node, field, None)
                if not (isinstance(body, list) and body and isinstance(body[0], ast.stmt)):
                    continue
                out = []
                for s in body:
                    if isinstance(s, (ast.For, ast.While, ast.If, ast.Return, ast.FunctionDef)):
                        out.append(s)
                        continue
                    key = f"{fn.__name__}:{s.lineno + first}: {ast.unparse(s)[:60]}"
                    out += [ast.parse("__t0 = __clock()").body[0], s,
                            ast.parse(f"__spent[{key!r}] += __clock() - __t0").body[0]]
                setattr(node, field, out)
            return node

    Timer().visit(tree)
    tree.body[0].decorator_list = []
    ast.fix_missing_locations(tree)
    env = dict(fn.__globals__, __clock=time.thread_time, __spent=_spent)
    exec(compile(tree, f"<timed {fn.__name__}>", "exec"), env)
    return env[fn.__name__], env


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    gen = mt19937.MT19937(0)
    n = 10**6 // 16 * 16
    words = gen.random(n)
    out = np.empty(n, np.float32)

    def median_ms(fn):
        fn()
        times = []
        for _ in range(args.repeats):
            t = time.thread_time()
            fn()
            times.append(time.thread_time() - t)
        return statistics.median(times) * 1e3

    chunk = normal_fill32._ROWS * 16
    print(f"words (numpy MT19937, {chunk} a call): "
          f"{median_ms(lambda: [gen.random(chunk) for _ in range(0, n, chunk)]):.2f} ms")
    print(f"fill from given words: {median_ms(lambda: normal_fill32.fill_from_words(words, out, 0.0, 1.0)):.2f} ms")

    timed = {name: _timed_copy(getattr(normal_fill32, name)) for name in _STEPS}
    for fn, env in timed.values():  # the timed copies call each other
        env.update({name: f for name, (f, _) in timed.items()})
    fill = timed["fill_from_words"][0]
    fill(words, out, 0.0, 1.0)
    _spent.clear()
    for _ in range(args.repeats):
        fill(words, out, 0.0, 1.0)
    print(f"per statement, ms per 1e6 values (a call's time includes its callee's statements):")
    for key, spent in _spent.most_common(args.top):
        print(f"{spent / args.repeats * 1e3:8.3f}  {key}")


if __name__ == "__main__":
    main()
