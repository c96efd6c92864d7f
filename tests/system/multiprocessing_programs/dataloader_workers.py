"""DataLoader with worker processes: batches, faults and seeds (one JSON document)."""
import json, os, re, signal, time
import torch
from torch.utils.data import DataLoader, TensorDataset, Dataset
class Sq(Dataset):
    def __len__(self): return 10
    def __getitem__(self, i): return {'x': torch.full((2,), float(i)), 'i': i, 'n': torch.tensor(i).numpy() if False else i * 1.5}
class Dies(Dataset):
    def __len__(self): return 100
    def __getitem__(self, i):
        if i == 5: os.kill(os.getpid(), signal.SIGKILL)
        return i
class Raises(Dataset):
    def __len__(self): return 10
    def __getitem__(self, i):
        if i == 3: raise ValueError('bad item 3')
        return i
def wif(wid):
    torch.manual_seed(100 + wid)
class R(Dataset):
    def __len__(self): return 4
    def __getitem__(self, i): return torch.rand(2)
if __name__ == '__main__':
    out = {}
    ds = TensorDataset(torch.arange(12.).view(6, 2))
    out['basic'] = [b[0].tolist() for b in DataLoader(ds, batch_size=2, num_workers=2)]
    out['dict'] = [{k: v.tolist() for k, v in b.items()} for b in DataLoader(Sq(), batch_size=4, num_workers=2, persistent_workers=True)]
    out['pin_false_shuffle'] = [b for b in DataLoader(Sq(), batch_size=None, num_workers=1, shuffle=True, generator=torch.Generator().manual_seed(0), collate_fn=lambda d: d['i'])]
    out['rand_wif'] = [b.tolist() for b in DataLoader(R(), batch_size=2, num_workers=2, worker_init_fn=wif)]
    g = torch.Generator().manual_seed(7)
    out['rand_default_seed'] = [b.shape for b in DataLoader(R(), batch_size=2, num_workers=2, generator=g)]
    try:
        list(DataLoader(Raises(), batch_size=2, num_workers=2))
    except ValueError as e:
        out['raises'] = str(e).splitlines()[0]
    t0 = time.time()
    try:
        list(DataLoader(Dies(), batch_size=2, num_workers=2))
    except RuntimeError as e:
        out['dies'] = re.sub(r'\d+', 'N', str(e))
    out['dies_fast'] = time.time() - t0 < 30
    print(json.dumps(out, default=str))
