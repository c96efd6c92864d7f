"""One side of a FileStore shared by two processes (one on upstream torch, one on ours).

    python file_store_peer.py PATH first|second

Both open FileStore(PATH, 2); the first writes, the second reads what the first wrote and writes
back, and each prints one JSON line of what it saw. When both have finished, the file is gone."""

import json
import sys
from datetime import timedelta

import torch.distributed as dist

path, role = sys.argv[1], sys.argv[2]
s = dist.FileStore(path, 2)
s.set_timeout(timedelta(seconds=120))
seen = {}
if role == "first":
    s.set("a", "from first")
    seen["add"] = s.add("n", 5)
    s.set("gone", "x")
    s.delete_key("gone")
    s.multi_set(["m1", "m2"], ["1", b"2"]) if hasattr(s, "multi_set") else None
    s.set("ready", "1")
    s.wait(["back"])
    seen.update(b=s.get("b").decode(), n=s.add("n", 0), cas=s.compare_set("c", "v1", "v2").decode())
else:
    s.wait(["ready"])
    seen.update(a=s.get("a").decode(), n=s.add("n", 2), gone=s.check(["gone"]),
                m=[v.decode() for v in s.multi_get(["m1", "m2"])])
    s.compare_set("c", "", "v1")
    s.append("b", "fro")
    s.append("b", "m second")
    s.set("back", "1")
seen["num_keys"] = s.num_keys()
print(json.dumps(seen), flush=True)
