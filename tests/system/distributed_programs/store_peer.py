"""One side of a TCPStore shared by two processes (either torch may host it)."""

import json
import os
import sys
from datetime import timedelta

import torch.distributed as dist

rank = int(os.environ["RANK"])
port = int(os.environ["MASTER_PORT"])
# generous: the other side may still be importing torch on a loaded machine
store = dist.TCPStore("127.0.0.1", port, 2, rank == 0, timedelta(seconds=240), wait_for_workers=True)
out = {}
store.set(f"k{rank}", f"from {rank}")
out["other"] = store.get(f"k{1 - rank}").decode()
out["add"] = store.add("counter", 10 + rank)
store.wait(["k0", "k1"])
if rank == 0:
    store.set("swap", "a")
    store.multi_set(["m1", "m2"], ["x", "y"])
    store.append("log", "0")
    store.set("ready0", "1")
    store.wait(["ready1"])
else:
    store.wait(["ready0"])
    out["cas_hit"] = store.compare_set("swap", "a", "b").decode()
    out["cas_miss"] = store.compare_set("swap", "zzz", "c").decode()
    out["cas_new"] = store.compare_set("fresh", "", "n").decode()
    out["multi_get"] = [v.decode() for v in store.multi_get(["m1", "m2"])]
    store.append("log", "1")
    out["log"] = store.get("log").decode()
    out["check"] = [store.check(["m1", "k0"]), store.check(["nope"])]
    out["delete"] = [store.delete_key("m2"), store.delete_key("m2")]
    try:
        store.wait(["never"], timedelta(milliseconds=300))
        out["wait_timeout"] = "no error"
    except Exception as e:
        out["wait_timeout"] = [type(e).__name__, str(e)]
    out["counter"] = int(store.get("counter"))
    store.set("ready1", "1")
store.wait(["ready0", "ready1"])

store.set(f"done{rank}", "1")
store.wait(["done0", "done1"])
# the host's process holds the server: it leaves only after the client's last request (a SET,
# which has no reply), or the client's final wait could meet a closed socket
if rank == 0:
    store.wait(["bye1"])
else:
    store.set("bye1", "1")
print(json.dumps(out))
sys.stdout.flush()
