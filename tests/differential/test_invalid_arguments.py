"""A call no signature accepts: the whole message (every line) compared with upstream's, in
separate processes. The signature whose argument count fits names its own mismatch (too many
positional arguments, a missing one, a keyword given twice, an unexpected keyword, an argument of
the wrong type); otherwise upstream's format_invalid_args: the signatures as printed (``Number``,
``int``, ``= default``), ``!``-marked misfits, the lines saying why a signature of the right
length did not match; a Scalar ``self`` keeps its name as a keyword. Not compared: an int list
whose later element is not an int (upstream fails while unpacking it; ours on its first check)."""
from __future__ import annotations

from bugfix_probe import assert_agree

SETUP = """
x = torch.ones(3)
p = torch.nn.Parameter(torch.ones(2))
def E(f):
    try:
        f()
        return "ok"
    except Exception as e:
        return f"{type(e).__name__}: {e}"
"""

CASES = {
    "where out= with a number": "E(lambda: torch.where(x > 0, x, 0., out=x))",
    "where four positionals": "E(lambda: torch.where(x > 0, x, 0., 1.))",
    "where strings": "E(lambda: torch.where(x, 'a', 'b'))",
    "add string": "E(lambda: torch.add(x, 'a'))",
    "add four": "E(lambda: torch.add(x, x, x, x))",
    "method add three": "E(lambda: x.add(x, x, x))",
    "method sub numbers": "E(lambda: x.sub(1, 2, 3))",
    "sum string dim": "E(lambda: torch.sum(x, 'a'))",
    "max four": "E(lambda: torch.max(x, 0, 1, 2))",
    "clamp string": "E(lambda: torch.clamp(x, 'a'))",
    "view string": "E(lambda: x.view('a'))",
    "cat three": "E(lambda: torch.cat(x, x, x))",
    "masked_fill three": "E(lambda: x.masked_fill(x, 1, 2))",
    "mul out= number": "E(lambda: torch.mul(x, 2, out=1))",
    "norm six": "E(lambda: torch.norm(x, 'fro', 0, True, 1, 2))",
    "index_select string": "E(lambda: x.index_select('a', x))",
    "add alpha string": "E(lambda: torch.add(x, x, alpha='a'))",
    "add unknown keyword": "E(lambda: torch.add(x, x, beta=2))",
    "add input and other as keywords": "E(lambda: torch.add(x, other=x, input=x))",
    "add other twice": "E(lambda: torch.add(x, x, other=x))",
    "add nothing": "E(lambda: torch.add())",
    "clamp nothing": "E(lambda: torch.clamp())",
    "mm one": "E(lambda: torch.mm(x))",
    "max keywords": "E(lambda: torch.max(x, dim='a', keepdim=1))",
    "std five": "E(lambda: torch.std(x, [0], 1, 2, 3))",
    "new_zeros string": "E(lambda: x.new_zeros('a'))",
    "full three": "E(lambda: torch.full((2,), x, x))",
    "linear string": "E(lambda: torch.nn.functional.linear(x, 'a'))",
    "addmm five": "E(lambda: torch.addmm(x, x, x, 1, 2))",
    "topk string": "E(lambda: torch.topk(x, 'a'))",
    "stack three": "E(lambda: torch.stack(x, 0, 0))",
    "gather two": "E(lambda: torch.gather(x, 0))",
    "arange string": "E(lambda: torch.arange('a'))",
    "split four": "E(lambda: torch.split(x, 1, 2, 3))",
    "parameter mul string": "E(lambda: torch.mul(p, 'a'))",
    "parameter add three": "E(lambda: p.add(p, p, p))",
    "pow Scalar self keyword": "E(lambda: torch.pow(self=2, exponent=x))",
    "pow input keyword": "E(lambda: torch.pow(input=2, exponent=x))",
    "where self keyword": "E(lambda: torch.where(x > 0, self=2., other=x))",
    "where input keyword": "E(lambda: torch.where(x > 0, input=2., other=x))",
    "remainder self keyword": "E(lambda: torch.remainder(self=2, other=x))",
    "xlogy input keyword": "E(lambda: torch.xlogy(input=2., other=x))",
}


def test_messages_agree_line_for_line():
    assert_agree(CASES, setup=SETUP)
