"""Memory overlap of written tensors, compared with upstream in separate processes: an in-place
or out= operation whose output has internal overlap (an expanded tensor) or whose input shares
only some of the output's elements is refused with upstream's message; the very same elements
(``x.add_(x)``, ``out=`` the input) and empty tensors pass with upstream's values, non-dense
operands (too hard to tell) pass. Operators through the dense in-place lanes (float32 add_, lerp_...),
the derived in-place and out= kernels (integer tensors, other operators) and copy_."""
from __future__ import annotations

from bugfix_probe import assert_agree

SETUP = """
def P(f, dtype=torch.float32):
    x = torch.arange(10, dtype=dtype)
    f(x)
    return x
E = lambda: torch.zeros(3, 1).expand(3, 4)
"""

PARTIAL = {
    "add_": "P(lambda x: x[1:].add_(x[:-1]))",
    "add_ alpha": "P(lambda x: x[1:].add_(x[:-1], alpha=2.0))",
    "sub_": "P(lambda x: x[:-1].sub_(x[1:]))",
    "mul_": "P(lambda x: x[1:].mul_(x[:-1]))",
    "div_": "P(lambda x: x[1:].div_(x[:-1]))",
    "lerp_": "P(lambda x: x[1:].lerp_(x[:-1], 0.3))",
    "addcmul_": "P(lambda x: x[1:].addcmul_(x[:-1], x[:-1]))",
    "addcdiv_": "P(lambda x: x[2:].addcdiv_(torch.ones(8), x[1:-1]))",
    "clamp_ tensor": "P(lambda x: x[1:].clamp_(min=x[:-1]))",
    "atan2_": "P(lambda x: x[1:].atan2_(x[:-1]))",
    "pow_": "P(lambda x: x[1:].pow_(x[:-1]))",
    "int add_": "P(lambda x: x[1:].add_(x[:-1]), torch.int64)",
    "int mul_": "P(lambda x: x[1:].mul_(x[:-1]), torch.int64)",
    "float64 add_": "P(lambda x: x[1:].add_(x[:-1]), torch.float64)",
    "same range, other strides": "P(lambda x: x.view(2, 5).add_(x.view(5, 2).t()))",
    "int view of float": "P(lambda x: x.view(torch.int32)[1:].bitwise_and_(x.view(torch.int32)[:-1]))",
    "out= add": "P(lambda x: torch.add(x[:-1], 1, out=x[1:]))",
    "out= neg": "P(lambda x: torch.neg(x[:-1], out=x[1:]))",
    "out= mul second operand": "P(lambda x: torch.mul(torch.ones(9), x[:-1], out=x[1:]))",
    "copy_": "P(lambda x: x[1:].copy_(x[:-1]))",
    "copy_ transposed": "P(lambda x: x[:9].view(3, 3).copy_(x[:9].view(3, 3).t()))",
}

INTERNAL = {
    "add_ number": "E().add_(1)",
    "mul_ tensor": "E().mul_(torch.ones(3, 4))",
    "neg_": "E().neg_()",
    "relu_": "E().relu_()",
    "sigmoid_": "E().sigmoid_()",
    "clamp_": "E().clamp_(0, 1)",
    "clamp_min_": "E().clamp_min_(0)",
    "lerp_": "E().lerp_(torch.ones(3, 4), 0.5)",
    "copy_": "E().copy_(torch.ones(3, 4))",
    "copy_ number": "E().copy_(torch.tensor(1.))",
    "out= add": "torch.add(torch.ones(3, 4), 1, out=E())",
    "out= relu (functional, then a copy)": "torch.relu(torch.ones(3, 4), out=E())",
    "fill_ passes": "E().fill_(2)",
    "zero_ passes": "E().zero_()",
}

PASSES = {
    "self": "P(lambda x: x.add_(x))",
    "self, alpha": "P(lambda x: x.add_(x, alpha=-0.5))",
    "a view of all of self": "P(lambda x: x.mul_(x.view(10)))",
    "out= the input": "P(lambda x: torch.add(x, 1, out=x))",
    "out= relu reads before it writes": "P(lambda x: torch.relu(x[:-1] - 4, out=x[1:]))",
    "copy_ of self": "P(lambda x: x.copy_(x))",
    "copy_ of its own view": "P(lambda x: x.copy_(x.view_as(x)))",
    "apart": "P(lambda x: x[5:].add_(x[:5]))",
    # too hard to tell: upstream's values then follow its loop's order, not compared
    "non-dense operands": "P(lambda x: x[::2][1:].add_(x[::2][:-1])).shape",
    "empty": "P(lambda x: x[5:5].add_(x[4:4]))",
    "another storage": "P(lambda x: x[1:].add_(x[:-1].clone()))",
    "int view apart": "P(lambda x: x.view(torch.int32)[5:].bitwise_or_(x.view(torch.int32)[:5]))",
}


def test_partial_overlap_is_refused_as_upstream():
    assert_agree(PARTIAL, setup=SETUP)


def test_internal_overlap_is_refused_as_upstream():
    assert_agree(INTERNAL, setup=SETUP)


def test_the_same_elements_and_apart_pass_with_upstreams_values():
    assert_agree(PASSES, setup=SETUP)
