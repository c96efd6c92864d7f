"""CoTTA (Wang et al., CVPR 2022): continual adaptation with a mean teacher and stochastic restore.

All parameters are trained (BatchNorm on batch statistics) by the cross-entropy between the
student's prediction and the teacher's: the EMA teacher (0.999) averages 32 augmented views when
the source model's mean confidence is below 0.92. After each step every weight/bias element is
restored to the source with probability 0.01. Reference optimizer for CIFAR: Adam lr 1e-3.
The prediction returned is the teacher's.

Where the reference keeps deep copies (student state, anchor model, teacher model, optimizer
state), here the source IS the delta's base (the anchor runs on it through functional_call),
and the teacher's weights live in ``delta.state`` — one copy of what is adapted.
"""

from __future__ import annotations

import torch
from torch.func import functional_call

from ..delta import select
from .augment import augment
from .method import Method, make_optimizer
from . import check


def _cross_entropy(student, teacher):
    return -(teacher.softmax(1) * student.log_softmax(1)).sum(1)


class CoTTA(Method):
    name = "cotta"
    needs_backward = True
    updates = "all parameters (and an EMA teacher of them)"

    def __init__(self, lr: float = 1e-3, mt: float = 0.999, rst: float = 0.01, ap: float = 0.92,
                 n_aug: int = 32, sign: float = 1.0):
        self.lr, self.mt = check.real("CoTTA", "lr", lr), check.real("CoTTA", "mt", mt, hi=1.0)
        self.rst, self.ap = check.real("CoTTA", "rst", rst, hi=1.0), check.real("CoTTA", "ap", ap)
        self.n_aug, self.sign = check.integer("CoTTA", "n_aug", n_aug), check.sign("CoTTA", sign)

    def covers(self, model):
        return [n for n, _ in model.named_parameters()]

    def configure(self, model):
        model.train()
        model.requires_grad_(True)
        for _, m in select.batch_norms(model):
            m.track_running_stats = False

    def _params(self, model, values):
        # parameters from ``values``, buffers as they are
        return {**dict(model.named_buffers()), **values}

    def step(self, model, x, delta):
        opt = self.optimizer(model, delta, make_optimizer("adam", self.lr))
        teacher = delta.state.get("teacher")
        if teacher is None:
            teacher = delta.state["teacher"] = {n: t.clone() for n, t in delta.base.items()}
        out = model(x)
        with torch.no_grad():
            anchor = functional_call(model, self._params(model, delta.base), (x,)).softmax(1).max(1)[0]
            standard = functional_call(model, self._params(model, teacher), (x,))
            if anchor.mean(0) < self.ap:
                views = [functional_call(model, self._params(model, teacher), (augment(x),))
                         for _ in range(self.n_aug)]
                target = torch.stack(views).mean(0)
            else:
                target = standard
        loss = self.sign * _cross_entropy(out, target).mean(0)
        loss.backward()
        opt.step()
        opt.zero_grad()
        with torch.no_grad():
            for n in delta.names:
                p = delta._get(n)
                teacher[n].mul_(self.mt).add_(p.detach(), alpha=1 - self.mt)
            for n in delta.names:
                if n.rpartition(".")[2] not in ("weight", "bias"):
                    continue
                p = delta._get(n)
                mask = (torch.rand(p.shape) < self.rst).to(p.dtype)
                p.copy_(delta.base[n] * mask + p * (1.0 - mask))
        return target

    def predict(self, model, x):
        return model(x)
