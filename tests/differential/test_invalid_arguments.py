"""A call no signature accepts: the whole message (every line) compared with upstream's, in
separate processes. The signature whose argument count fits names its own mismatch (too many
positional arguments, a missing one, a keyword given twice, an unexpected keyword, an argument of
the wrong type); otherwise upstream's format_invalid_args: the signatures as printed (``Number``,
``int``, ``= default``), ``!``-marked misfits, the lines saying why a signature of the right
length did not match; a Scalar ``self`` keeps its name as a keyword. Int lists: the check reads
the first element ("found element of type bool at pos 0"), the others are unpacked once the
signature matched (an int, a bool, a numpy integer, a one-element integer tensor; anything else
"failed to unpack the object at pos N"), and the positional arguments make the list only if the
first is an int. Tensor.to (and nn.Module.to) parse its three signatures the same way: a Python
number is a tensor there. A type is named as upstream's C types name themselves (torch.dtype,
torch._C.Generator, ...)."""
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

INT_LISTS = {
    "zeros str later": "E(lambda: torch.zeros(2, 3, 'a'))",
    "zeros float later": "E(lambda: torch.zeros(2, 3.0))",
    "zeros None in tuple": "E(lambda: torch.zeros((2, None)))",
    "zeros float tensor": "E(lambda: torch.zeros((2, torch.tensor(3.))))",
    "zeros numpy int": "torch.zeros((2, np.int64(3))).shape",
    "zeros bool later": "torch.zeros((2, True)).shape",
    "zeros bool first": "E(lambda: torch.zeros((True, 2)))",
    "zeros bool first, positional": "E(lambda: torch.zeros(True, 2))",
    "zeros float first": "E(lambda: torch.zeros((2.0, 3)))",
    "zeros float first, positional": "E(lambda: torch.zeros(2.0, 3))",
    "zeros float alone": "E(lambda: torch.zeros(2.0))",
    "zeros list later": "E(lambda: torch.zeros((2, [3])))",
    "zeros keyword float later": "E(lambda: torch.zeros(size=(2, 3.0)))",
    "zeros keyword float first": "E(lambda: torch.zeros(size=(2.0, 3)))",
    "zeros int tensor later": "torch.zeros((2, torch.tensor(3))).shape",
    "zeros one-element int tensor later": "torch.zeros((2, torch.tensor([3]))).shape",
    "zeros numpy bool later": "E(lambda: torch.zeros((2, np.bool_(True))))",
    "zeros numpy float later": "E(lambda: torch.zeros((2, np.float64(3))))",
    "view str": "E(lambda: y.view(3, 'a'))",
    "view tuple float": "E(lambda: y.view((4, 6.0)))",
    "view float first": "E(lambda: y.view(4.0, 6))",
    "permute str": "E(lambda: y.permute(1, 'a', 0))",
    "permute float alone": "E(lambda: y.permute(1.5))",
    "permute list float first": "E(lambda: y.permute([1.5, 0, 2]))",
    "permute keyword list float first": "E(lambda: y.permute(dims=[1.5, 0, 2]))",
    "permute numpy bool": "E(lambda: y.permute([0, np.bool_(True), 2]))",
    "sum dim tuple str": "E(lambda: torch.sum(y, (1, 'a')))",
    "sum dim tuple float": "E(lambda: torch.sum(y, (1, 2.0)))",
    "expand str": "E(lambda: y.expand(1, 'a'))",
    "reshape nested": "E(lambda: y.reshape([3, [2]]))",
    "reshape float": "E(lambda: y.reshape(4, 6.0))",
    "flip float later": "E(lambda: y.flip((0, 1.0)))",
    "new_zeros float later": "E(lambda: y.new_zeros((2, 3.0)))",
    "empty_strided float stride": "E(lambda: torch.empty_strided((2, 3), (3, 1.0)))",
    "repeat float": "E(lambda: y.repeat(1, 2.0, 1))",
    "tile float": "E(lambda: y.tile((1, 2.0)))",
    "unflatten bool first": "E(lambda: y.unflatten(1, (True, 3)))",
    "unflatten float later": "E(lambda: y.unflatten(1, (1, 3.0)))",
}


def test_messages_agree_line_for_line():
    assert_agree(CASES, setup=SETUP)


def test_int_lists_as_upstream_unpacks_them():
    assert_agree(INT_LISTS, setup=SETUP + "import numpy as np\ny = torch.ones(2, 3, 4)\n")


TO = {
    "to numpy type": "E(lambda: x.to(np.float16))",
    "to dtype and int": "E(lambda: x.to(torch.float32, 1))",
    "to five positionals": "E(lambda: x.to('cpu', torch.float32, False, False, 1))",
    "to non_blocking int": "E(lambda: x.to(torch.float32, non_blocking=1))",
    "to unknown keyword": "E(lambda: x.to(foo=1))",
    "to list": "E(lambda: x.to([1]))",
    "to tensor and str": "E(lambda: x.to(x, 'a'))",
    "to copy None": "E(lambda: x.to(torch.float32, copy=None))",
    "to device a dtype": "E(lambda: x.to(device=torch.float32))",
    "to negative index": "E(lambda: x.to(-1))",
    "to numpy int index": "E(lambda: x.to(np.int64(0)))",
    "to float": "x.to(1.5)",
    "to bool": "x.to(True)",
    "to complex": "x.to(1 + 1j)",
    "to numpy float32": "x.to(np.float32(1))",
    "to float, copy": "x.to(1.5, True)",
    "to tensor": "x.to(torch.ones(1, dtype=torch.int8))",
    "to device and dtype": "x.to('cpu', torch.float64)",
    "to keywords": "x.to(dtype=torch.int32, copy=True)",
    "to python type": "x.to(int)",
    "module to numpy type": "E(lambda: torch.nn.Linear(1, 1).to(np.float16))",
    "module to float": "(torch.manual_seed(0), torch.nn.Linear(1, 1).to(1.5).weight)[1]",
    "module to dtype": "(torch.manual_seed(0), torch.nn.Linear(1, 1).to(torch.int8).weight)[1]",
}
TYPE_NAMES = {f"add {name}": f"E(lambda: x.add({value}))" for name, value in {
    "dtype": "torch.float32", "device": "torch.device('cpu')", "layout": "torch.strided",
    "memory_format": "torch.contiguous_format", "qscheme": "torch.per_tensor_affine",
    "generator": "torch.Generator()", "size": "torch.Size([1])", "finfo": "torch.finfo()",
    "iinfo": "torch.iinfo(torch.int8)", "tensor class": "torch.Tensor",
    "user class": "type('Foo', (), {})()"}.items()}


def test_to_parses_as_upstream():
    assert_agree(TO, setup=SETUP + "import numpy as np\n")


def test_types_named_as_upstream_names_them():
    assert_agree(TYPE_NAMES, setup=SETUP)
