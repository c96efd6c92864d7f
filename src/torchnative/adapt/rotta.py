"""RoTTA (Yuan et al., CVPR 2023): robust test-time adaptation on correlated, changing streams.

* Robust BatchNorm: every BatchNorm normalises with statistics that follow the test stream as an
  EMA (α 0.05) of batch statistics, starting at the source's; in eval mode it uses them as they
  are. Here the EMA lives in the layer's own running_mean/running_var (covered by the delta) and
  a forward hook does the robust normalisation in train mode, so the model is not rebuilt.
* A teacher (an EMA, ν 0.001, of the student's norm affine parameters, with its own robust
  statistics) predicts every batch in eval mode; its pseudo-labels and entropies file each sample
  in a category-balanced memory bank (capacity 64, rotta_memory.py).
* Every ``update_frequency`` (64) samples the student, in train mode, learns on a strong
  augmentation of the bank against the teacher's prediction of the bank, each sample weighted by
  its timeliness exp(−a)/(1 + exp(−a)) (a = age / capacity); Adam lr 1e-3, betas (0.9, 0.999).
* The prediction returned is the teacher's, made before the update.

Reference: BIT-DA/RoTTA (configs/adapter/rotta.yaml for the defaults). The reference keeps a
deepcopy of the model as teacher; here the teacher is only the covered tensors, in
``delta.state``, and it runs on the model through ``functional_call``. The strong augmentation is
this package's seeded tensor augmentation (augment.py), sized for 8×8 digits.
"""

from __future__ import annotations

import torch
import torch.nn as nn
from torch.func import functional_call

from ..delta import select
from .augment import augment
from .method import Method, make_optimizer
from .rotta_memory import CategoryBalancedMemory
from . import check


def _robust_bn(alpha: float):
    def hook(m, args, out):
        if not m.training:
            return None  # eval: BatchNorm on the stored (robust) statistics, as computed
        x = args[0]
        dims = [0] + list(range(2, x.dim()))
        b_var, b_mean = torch.var_mean(x, dim=dims, unbiased=False)
        mean = (1 - alpha) * m.running_mean + alpha * b_mean
        var = (1 - alpha) * m.running_var + alpha * b_var
        with torch.no_grad():
            m.running_mean.copy_(mean)
            m.running_var.copy_(var)
        shape = (1, -1) + (1,) * (x.dim() - 2)
        y = (x - mean.view(shape)) / torch.sqrt(var.view(shape) + m.eps)
        if m.weight is not None:
            y = y * m.weight.view(shape) + m.bias.view(shape)
        return y
    return hook


def _teacher_entropy(student, teacher):
    return -(teacher.softmax(1) * student.log_softmax(1)).sum(1)


class RoTTA(Method):
    name = "rotta"
    needs_backward = True
    updates = "BatchNorm affine and robust statistics (and an EMA teacher of them)"

    def __init__(self, lr: float = 1e-3, alpha: float = 0.05, nu: float = 0.001,
                 memory_size: int = 64, update_frequency: int = 64, lambda_t: float = 1.0,
                 lambda_u: float = 1.0, num_classes: int | None = None, sign: float = 1.0):
        self.lr = check.real("RoTTA", "lr", lr)
        self.alpha, self.nu = check.real("RoTTA", "alpha", alpha, hi=1.0), \
            check.real("RoTTA", "nu", nu, hi=1.0)
        self.memory_size = check.integer("RoTTA", "memory_size", memory_size)
        self.update_frequency = check.integer("RoTTA", "update_frequency", update_frequency)
        self.lambda_t = check.real("RoTTA", "lambda_t", lambda_t)
        self.lambda_u = check.real("RoTTA", "lambda_u", lambda_u)
        self.num_classes = check.integer("RoTTA", "num_classes", num_classes, optional=True)
        self.sign = check.sign("RoTTA", sign)  # -1 maximises the loss: must make the error rise

    def covers(self, model):
        bns = select.batch_norms(model)
        affine = [f"{n}.{p}" if n else p for n, m in bns for p in ("weight", "bias")
                  if isinstance(getattr(m, p, None), nn.Parameter)]
        stats = [f"{n}.{b}" if n else b for n, m in bns for b in ("running_mean", "running_var")
                 if getattr(m, b, None) is not None]
        return select.require(model, affine + stats if stats else [], "RoTTA",
                              "BatchNorm with running statistics")

    def configure(self, model):
        model.eval()
        model.requires_grad_(False)
        for _, m in select.batch_norms(model):
            m.track_running_stats = False  # the hook keeps the statistics, not BatchNorm itself
            if m.weight is not None:
                m.weight.requires_grad_(True)
                m.bias.requires_grad_(True)
            m._torchnative_hook = m.register_forward_hook(_robust_bn(self.alpha))

    def _teacher(self, delta):
        teacher = delta.state.get("teacher")
        if teacher is None:
            teacher = delta.state["teacher"] = {n: t.clone() for n, t in delta.base.items()}
        return teacher

    def _memory(self, delta, classes: int):
        n = self.num_classes or classes
        items = delta.state.setdefault("memory", [[] for _ in range(n)])
        return CategoryBalancedMemory(self.memory_size, n, self.lambda_t, self.lambda_u, items)

    def step(self, model, x, delta):
        self._state = delta.state  # the delta's own dict (revert clears it): predict's teacher
        teacher = self._teacher(delta)
        with torch.no_grad():
            model.eval()
            out = functional_call(model, teacher, (x,))
            prob = out.softmax(1)
            labels = prob.argmax(1)
            entropy = -(prob * torch.log(prob + 1e-6)).sum(1)
        mem = self._memory(delta, out.shape[1])
        for i in range(x.shape[0]):
            mem.add(x[i].detach().clone(), int(labels[i]), float(entropy[i]))
            seen = delta.state["seen"] = delta.state.get("seen", 0) + 1
            if seen % self.update_frequency == 0:
                self._update(model, delta, teacher, mem)
        return out

    def _update(self, model, delta, teacher, mem):
        opt = self.optimizer(model, delta, make_optimizer("adam", self.lr))
        model.train()
        try:
            data, ages = mem.samples()
            if data:
                bank = torch.stack(data)
                with torch.no_grad():
                    target = functional_call(model, teacher, (bank,))
                student = model(augment(bank))
                a = torch.tensor(ages, dtype=student.dtype)
                weight = torch.exp(-a) / (1 + torch.exp(-a))
                loss = self.sign * (_teacher_entropy(student, target) * weight).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
        finally:
            model.eval()
        with torch.no_grad():
            for n in delta.names:
                p = delta._get(n)
                if isinstance(p, nn.Parameter):
                    teacher[n].copy_((1 - self.nu) * teacher[n] + self.nu * p.detach())

    def predict(self, model, x):
        # the teacher predicts; with none yet (or after revert) it equals the model
        teacher = getattr(self, "_state", {}).get("teacher")
        return model(x) if teacher is None else functional_call(model, teacher, (x,))
