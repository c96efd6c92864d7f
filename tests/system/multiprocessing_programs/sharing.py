"""Shared memory across real processes: a child's write, Hogwild SGD, queues (one JSON document)."""
import json

import torch
import torch.multiprocessing as mp
import torch.nn as nn
def train(rank, model, steps):
    torch.manual_seed(rank)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        x = torch.randn(8, 4); y = x.sum(1, keepdim=True)
        opt.zero_grad(); ((model(x) - y) ** 2).mean().backward(); opt.step()
def child_write(t):
    t.add_(1)
def prod(qq, done):
    qq.put(torch.arange(6.).view(2, 3).t())
    qq.put({'a': torch.tensor([1, 2]), 'b': [torch.zeros(0), torch.tensor(3.5)]})
    done.wait()
if __name__ == '__main__':
    torch.manual_seed(0)
    out = {}
    t = torch.zeros(5); v = t[1:3]; t.share_memory_()
    p = mp.Process(target=child_write, args=(t,)); p.start(); p.join()
    out['child_write'] = [t.tolist(), v.tolist()]
    model = nn.Linear(4, 1); model.share_memory()
    w0 = model.weight.detach().clone()
    ps = [mp.Process(target=train, args=(r, model, 20)) for r in range(2)]
    [p.start() for p in ps]; [p.join() for p in ps]
    out['moved'] = bool((model.weight != w0).any())
    out['shared'] = model.weight.is_shared()
    x = torch.randn(8, 4)
    out['loss_small'] = float(((model(x).detach() - x.sum(1, keepdim=True)) ** 2).mean()) < 1.0
    for method in ('fork', 'spawn'):
        ctx = mp.get_context(method)
        qq = ctx.Queue(); done = ctx.Event()
        pr = ctx.Process(target=prod, args=(qq, done)); pr.start(); got = qq.get(); got2 = qq.get(); done.set(); pr.join()
        out['queue_' + method] = [got.tolist(), got.stride(), got.is_shared(), {k: str(v) for k, v in got2.items()}, pr.exitcode]
    print(json.dumps(out))
