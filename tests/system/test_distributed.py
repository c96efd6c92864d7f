"""torch.distributed on our torch: stores, collectives and faults, with real processes and
sockets on 127.0.0.1, compared with upstream's gloo in separate processes."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.distributed as dist

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "distributed_programs"))
from distributed_launch import check_ok, free_port, launch  # noqa: E402
from inputs import all_reduce_cases, data  # noqa: E402

from torchnative.testing import upstream  # noqa: E402

needs_upstream = pytest.mark.skipif(not upstream.available(), reason="needs .venv-upstream")


# -- collectives agree with upstream's gloo -----------------------------------------------------

def _float_sum_inputs(key: str, rank_out: int, world: int):
    """The per-rank inputs (float64) reduced into ``key``'s value on ``rank_out``, and the op."""
    for name, salt, shape, dtype, op in all_reduce_cases():
        if name == key:
            return [data(salt, shape, dtype, r).astype(np.float64) for r in range(world)], op, dtype
    if key == "all_reduce.bfloat16":
        import ml_dtypes

        return [data(90, (6,), np.float32, r).astype(ml_dtypes.bfloat16).astype(np.float64)
                for r in range(world)], "SUM", ml_dtypes.bfloat16
    if key == "all_reduce.complex64":
        return [np.stack([data(91, (4,), np.float32, r), data(92, (4,), np.float32, r)], -1)
                .astype(np.float64) for r in range(world)], "SUM", np.float32
    if key == "all_reduce.noncontiguous":
        return [data(93, (3, 4), np.float32, r).T.astype(np.float64) for r in range(world)], "SUM", np.float32
    if key == "reduce_scatter":
        return [data(20 + rank_out, (4,), np.float32, r).astype(np.float64) for r in range(world)], "SUM", np.float32
    if key == "async.future":
        return [data(60, (3,), np.float32, r).astype(np.float64) for r in range(world)], "SUM", np.float32
    return None


def _within_order_bound(value, inputs, op, dtype, world):
    """|value - exact| within the worst case of any order of the (world - 1) roundings."""
    import ml_dtypes  # its finfo knows bfloat16 as well as numpy's types

    eps = float(ml_dtypes.finfo(dtype).eps)
    if op in ("SUM", "AVG"):
        exact, scale = np.sum(inputs, axis=0), np.sum(np.abs(inputs), axis=0)
        if op == "AVG":  # the sum, then one rounded division by the group size
            exact, scale = exact / world, scale / world + np.abs(exact / world) / (world - 1)
    else:
        exact = np.prod(inputs, axis=0)
        scale = np.abs(exact)
    bound = (world - 1) * eps * scale * 1.01 + float(ml_dtypes.finfo(dtype).tiny)
    return np.abs(value.astype(np.float64) - exact) <= bound


def compare_results(ours: dict, theirs: dict, world: int, rank: int) -> list[str]:
    """Problems found comparing one rank's results (empty when they agree)."""
    problems = []
    if set(ours) != set(theirs):
        problems.append(f"keys differ: only ours {sorted(set(ours) - set(theirs))}, "
                        f"only upstream {sorted(set(theirs) - set(ours))}")
    for key in sorted(set(ours) & set(theirs)):
        a, b = ours[key], theirs[key]
        if a.dtype != b.dtype or a.shape != b.shape:
            problems.append(f"{key}: {a.dtype}{a.shape} vs upstream {b.dtype}{b.shape}")
            continue
        spec = _float_sum_inputs(key, rank, world) if a.dtype.kind in "fc" else None
        if spec is not None and spec[1] in ("SUM", "PRODUCT", "AVG") and world > 2:
            inputs, op, dtype = spec
            if not _within_order_bound(b, inputs, op, dtype, world).all():
                problems.append(f"{key}: upstream itself outside the order bound (harness error)")
            if not _within_order_bound(a, inputs, op, dtype, world).all():
                problems.append(f"{key}: ours outside the reduction-order bound")
        elif not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            # two operands commute exactly in IEEE arithmetic: at world 2 floats agree bitwise
            problems.append(f"{key}: differs from upstream ({a.ravel()[:4]} vs {b.ravel()[:4]})")
    return problems


_RUNS: dict = {}


def _run_collectives(side: str, world: int, tmp_path_factory):
    if (side, world) not in _RUNS:
        out = tmp_path_factory.mktemp(f"coll_{side}_{world}")
        check_ok(launch("collectives.py", [side] * world, str(out), timeout=600))
        _RUNS[side, world] = [dict(np.load(out / f"rank{r}.npz")) for r in range(world)]
    return _RUNS[side, world]


OBJECT_KEYS = ("all_gather_object", "broadcast_object_list", "gather_object",
               "scatter_object_list", "send_recv_object_list")


def _split_objects(d: dict):
    objs = {k: v for k, v in d.items() if k.split(".")[0] in OBJECT_KEYS}
    return {k: v for k, v in d.items() if k not in objs}, objs


@needs_upstream
@pytest.mark.parametrize("world", [2, pytest.param(3, marks=pytest.mark.slow),
                                   pytest.param(4, marks=pytest.mark.slow),
                                   pytest.param(8, marks=pytest.mark.slow)])
def test_collectives_agree_with_upstream(world, tmp_path_factory):
    ours = _run_collectives("ours", world, tmp_path_factory)
    theirs = _run_collectives("upstream", world, tmp_path_factory)
    problems = []
    for r in range(world):
        a, _ = _split_objects(ours[r])
        b, _ = _split_objects(theirs[r])
        problems += [f"rank {r}: {p}" for p in compare_results(a, b, world, r)]
    assert not problems, "\n".join(problems[:40])
    assert len(ours[0]) > 60


@needs_upstream
def test_object_collectives_agree_with_upstream(tmp_path_factory):
    ours = _run_collectives("ours", 2, tmp_path_factory)
    theirs = _run_collectives("upstream", 2, tmp_path_factory)
    for r in range(2):
        a = {k: v.item() for k, v in _split_objects(ours[r])[1].items()}
        b = {k: v.item() for k, v in _split_objects(theirs[r])[1].items()}
        assert not [k for k in b if k.endswith(".error")], b  # upstream ran every one
        assert set(a) == {"all_gather_object", "broadcast_object_list", "gather_object",
                          "scatter_object_list", "send_recv_object_list",
                          "broadcast_object_list.large"}, a
        assert a == b, (r, a, b)
    # the objects differ by rank, so a rank answering with its own (or a peer's) is caught
    assert _split_objects(ours[0])[1]["scatter_object_list"].item() == "[{'to': 0, 'n': 1}]"
    assert _split_objects(ours[1])[1]["scatter_object_list"].item() == "[{'to': 1, 'n': 11}]"
    assert _split_objects(ours[1])[1]["gather_object"].item() == \
        "[{'r': 0, 't': (0, '')}, {'r': 1, 't': (1, 'x')}]"
    assert _split_objects(ours[0])[1]["gather_object"].item() == "None"


def test_comparison_catches_wrong_results():
    """The comparator is the test's eyes: plausible faults must all be caught."""
    world = 3
    key = "all_reduce.float32.SUM"
    inputs = _float_sum_inputs(key, 0, world)[0]
    good = {key: np.sum(inputs, axis=0).astype(np.float32),
            "all_reduce.int64.SUM": np.arange(5, dtype=np.int64),
            "broadcast.large": np.arange(786_435, dtype=np.float32)}
    assert compare_results(good, good, world, 0) == []
    faults = {
        "last element off": lambda d: d[key].reshape(-1).__setitem__(-1, d[key].reshape(-1)[-1] + 1e-3),
        "integer off by one": lambda d: d["all_reduce.int64.SUM"].__setitem__(-1, 5),
        "dropped participant": lambda d: d.__setitem__(key, np.sum(inputs[:-1], axis=0).astype(np.float32)),
        "wrong dtype": lambda d: d.__setitem__("all_reduce.int64.SUM", d["all_reduce.int64.SUM"].astype(np.int32)),
        "missing key": lambda d: d.pop("all_reduce.int64.SUM"),
        "sign flipped": lambda d: d.__setitem__(key, -d[key]),
        "a chunk not forwarded": lambda d: d["broadcast.large"].__setitem__(slice(1 << 18, 1 << 19), 0),
    }
    for name, fault in faults.items():
        bad = {k: v.copy() for k, v in good.items()}
        fault(bad)
        assert compare_results(bad, good, world, 0), name


# -- stores -----------------------------------------------------------------------------------

@needs_upstream
@pytest.mark.parametrize("sides", [("upstream", "ours"), ("ours", "upstream")],
                         ids=["upstream-hosts", "ours-hosts"])
def test_tcpstore_mixed_rendezvous(sides):
    import json

    results = launch("store_peer.py", list(sides), timeout=300)
    check_ok(results)
    got = [json.loads(o.strip().splitlines()[-1]) for _, o, _ in results]
    assert got[0]["other"] == "from 1" and got[1]["other"] == "from 0"
    assert sorted([got[0]["add"], got[1]["add"]]) in ([10, 21], [11, 21])
    r1 = got[1]
    assert r1["cas_hit"] == "b" and r1["cas_miss"] == "b" and r1["cas_new"] == "n"
    assert r1["multi_get"] == ["x", "y"] and r1["log"] == "01" and r1["counter"] == 21
    assert r1["check"] == [True, False] and r1["delete"] == [True, False]
    assert r1["wait_timeout"] == ["DistStoreError", "wait timeout after 300ms, keys: /never"]


def test_hash_prefix_file_stores(tmp_path):
    for store in (dist.HashStore(), dist.FileStore(str(tmp_path / "fs"), 1)):
        p = dist.PrefixStore("pre", store)
        p.set("a", "1")
        assert store.get("pre/a") == b"1" and p.get("a") == b"1"
        assert p.add("n", 3) == 3 and p.add("n", -1) == 2 and p.get("n") == b"2"
        assert p.compare_set("a", "1", "2") == b"2" and p.compare_set("a", "9", "3") == b"2"
        assert p.check(["a", "n"]) and not p.check(["zz"])
        p.multi_set(["x", "y"], ["1", b"2"])
        assert p.multi_get(["x", "y"]) == [b"1", b"2"]
        p.append("x", "9")
        assert p.get("x") == b"19"
        # upstream's FileStore answers True for a missing key too (it only appends a record)
        assert p.delete_key("x") and p.delete_key("x") == isinstance(store, dist.FileStore)
        assert not p.check(["x"])
        start = time.monotonic()
        with pytest.raises(dist.DistStoreError, match="wait timeout after 200ms"):
            p.wait(["never"], timedelta(milliseconds=200))
        assert time.monotonic() - start < 5
        store.set_timeout(timedelta(milliseconds=200))
        with pytest.raises(dist.DistStoreError):
            p.get("never")


def test_tcpstore_port_in_use_is_a_clear_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(dist.DistNetworkError, match="EADDRINUSE|address already in use"):
            dist.TCPStore("127.0.0.1", port, 1, True, timedelta(seconds=5), wait_for_workers=False)


def test_tcpstore_survives_garbage_and_serves_others():
    server = dist.TCPStore("127.0.0.1", 0, None, True, timedelta(seconds=10), wait_for_workers=False)
    for junk in (b"\xff" * 64, b"GET / HTTP/1.1\r\n\r\n", b"\x00\xce\xf7\x85\x3c\x63" + b"\xff" * 32,
                 b"\x00\xce\xf7\x85\x3c\x01" + b"\xff" * 16):
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
            s.sendall(junk)
            s.settimeout(5)
            assert s.recv(16) == b""  # the server drops the connection
    client = dist.TCPStore("127.0.0.1", server.port, None, False, timedelta(seconds=10),
                           wait_for_workers=False)
    client.set("k", "v")
    assert server.get("k") == b"v" and client.add("c", 2) == 2


def test_tcpstore_server_gone_is_a_clear_error():
    port = free_port()
    code = ("import sys, time; from datetime import timedelta; import torch.distributed as d\n"
            f"s = d.TCPStore('127.0.0.1', {port}, None, True, timedelta(seconds=60), wait_for_workers=False)\n"
            "print('up', flush=True); time.sleep(600)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "up"
        client = dist.TCPStore("127.0.0.1", port, None, False, timedelta(seconds=30),
                               wait_for_workers=False)
        client.set("a", "1")
        proc.kill()
        proc.wait(timeout=30)
        start = time.monotonic()
        with pytest.raises(dist.DistNetworkError, match="closed the connection|unreachable"):
            client.get("never")
        assert time.monotonic() - start < 20
    finally:
        proc.kill()


# -- process groups ------------------------------------------------------------------------

def test_world_size_one_in_process(tmp_path):
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'rdv'}", rank=0, world_size=1)
    try:
        x = torch.arange(4.0)
        dist.all_reduce(x)
        assert x.tolist() == [0.0, 1.0, 2.0, 3.0]
        outs = [torch.empty(2)]
        dist.all_gather(outs, torch.ones(2))
        assert outs[0].tolist() == [1.0, 1.0]
        w = dist.broadcast(x, 0, async_op=True)
        assert w.wait() and w.is_completed() and w.get_future().wait()[0] is x
        with pytest.raises(RuntimeError, match="AVG"):
            dist.all_reduce(torch.ones(2, dtype=torch.int64), op=dist.ReduceOp.AVG)
        dist.barrier()
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("method", ["tcp", pytest.param("file", marks=pytest.mark.slow)])
def test_init_methods(method, tmp_path):
    url = f"tcp://127.0.0.1:{free_port()}" if method == "tcp" else f"file://{tmp_path / 'rdv'}"
    results = launch("init_method.py", ["ours"] * 2, url, timeout=300)
    check_ok(results)
    assert [o.strip().splitlines()[-1] for _, o, _ in results] == ["sum 3.0", "sum 3.0"]


# -- faults -----------------------------------------------------------------------------------

def _results(results, index=0):
    lines = []
    for rc, out, err in results:
        found = [ln for ln in out.splitlines() if ln.startswith("RESULT")]
        lines.append(found[index].split(" ", 3) if len(found) > index
                     else ["RESULT", f"none rc={rc}", "0", err[-500:]])
    return lines


@needs_upstream
@pytest.mark.parametrize("side", ["ours", pytest.param("upstream", marks=pytest.mark.slow)])
def test_dead_rank_raises_upstreams_error_type_in_time(side):
    results = launch("faults.py", [side] * 2, "dead", timeout=300, env_extra={"TN_TIMEOUT": "20"})
    (_, kinds, seconds, msg), _ = _results(results)[0], results[1]
    assert "RuntimeError" in kinds.split(","), (kinds, msg)
    assert float(seconds) < 20


def test_rank_dying_mid_broadcast_fails_the_others_within_the_timeout():
    """Rank 1, second in the broadcast's chain, dies once the first chunk has reached it. The
    ranks downstream wait on a live neighbour, not on the dead rank: they must still raise before
    their timeout. A rank whose broadcast returned holds the whole message, and the group's next
    collective raises on every survivor."""
    timeout = 40
    results = launch("faults.py", ["ours"] * 4, "dies_mid_broadcast", timeout=300,
                     env_extra={"TN_TIMEOUT": str(timeout)})
    dying = [ln for ln in results[1][1].splitlines() if ln.startswith("DYING")]
    assert dying == ["DYING first=1.0 last=0.0"], results[1]  # it died with the message half-sent
    survivors = [r for i, r in enumerate(results) if i != 1]
    for rank, bcast, data, after in zip((0, 2, 3), *(_results(survivors, i) for i in range(3))):
        if rank != 0:
            assert "RuntimeError" in bcast[1].split(","), (rank, bcast)
        elif bcast[1] == "ok":
            assert data[1:3] == ["all-ones", "True"], data
        assert float(bcast[2]) < timeout, (rank, bcast)
        assert "RuntimeError" in after[1].split(",") and float(after[2]) < timeout, (rank, after)


def test_missing_rank_times_out_with_a_store_error():
    results = launch("faults.py", ["ours"], "missing", timeout=200,
                     env_extra={"WORLD_SIZE": "2", "TN_TIMEOUT": "4"})
    _, kinds, seconds, msg = _results(results)[0]
    assert kinds.split(",")[0] == "DistStoreError", msg
    assert 3.5 < float(seconds) < 30


def test_mismatched_collectives_are_clear_errors_on_every_rank():
    """Shape, dtype and root mismatches (upstream's gloo can hang on these): every rank raises,
    names what each rank called, and the group keeps working afterwards."""
    results = launch("faults.py", ["ours"] * 3, "mismatch", timeout=300)
    for case, what in enumerate(["float32[5]", "float64[4]", "root1"]):
        for _, kinds, _, msg in _results(results, case):
            assert kinds.split(",")[0] == "DistBackendError", msg
            assert "mismatched collective across ranks" in msg and what in msg, msg
    assert all(r[1] == "ok-after" and r[2] == "6.0" for r in _results(results, 3))


# -- DDP and torchrun ----------------------------------------------------------------------------

def _ddp_run(side, variant, dtype="float32"):
    import json

    key = ("ddp", side, variant, dtype)
    if key not in _RUNS:
        results = launch("ddp_train.py", [side] * 2, variant, timeout=400,
                         env_extra={"TN_DTYPE": dtype})
        check_ok(results)
        _RUNS[key] = [json.loads(o.strip().splitlines()[-1]) for _, o, _ in results]
    return _RUNS[key]


def _blocks(run, state="state"):
    """The run's numbers as blocks (losses, then each tensor of the final state)."""
    return [np.asarray(run["losses"])] + [np.asarray(v) for v in run[state].values()]


def _scaled_errors(a_blocks, b_blocks):
    """|a - b| relative to the largest magnitude of b's block (errors scale with the terms that
    made a value, not with the value: an entry near zero comes out of cancellation)."""
    return np.concatenate([np.abs(a - b) / max(float(np.max(np.abs(b))), 1e-12)
                           for a, b in zip(a_blocks, b_blocks)])


def _ddp_tolerance():
    """p90 of upstream's own float32-vs-float64 error over the run, floored at 4 ulp."""
    up32 = _blocks(_ddp_run("upstream", "plain")[0])
    up64 = _blocks(_ddp_run("upstream", "plain", "float64")[0])
    return max(float(np.quantile(_scaled_errors(up32, up64), 0.9)), 4 * float(np.finfo(np.float32).eps))


@needs_upstream
@pytest.mark.parametrize("variant", ["plain", pytest.param("no_sync", marks=pytest.mark.slow),
                                     "unused", pytest.param("hook", marks=pytest.mark.slow)])
def test_ddp_agrees_with_upstream_step_by_step(variant):
    ours, theirs = _ddp_run("ours", variant), _ddp_run("upstream", variant)
    tol = _ddp_tolerance()
    assert ours[0]["state"] == ours[1]["state"], "ranks hold different weights after DDP steps"
    for r in range(2):
        err = _scaled_errors(_blocks(ours[r]), _blocks(theirs[r]))
        assert (err <= tol).all(), (variant, r, float(err.max()), tol)
        # control: the same steps without averaging (a dropped participant) must be told apart
        control = [np.asarray(theirs[r]["losses"])] + _blocks(ours[r], "local_state")[1:]
        assert (_scaled_errors(control, _blocks(theirs[r])) > tol).any()


@needs_upstream
def test_ddp_broadcast_buffers_agrees_with_upstream():
    ours, theirs = _ddp_run("ours", "buffers"), _ddp_run("upstream", "buffers")
    tol = _ddp_tolerance()
    for r in range(2):
        err = _scaled_errors(_blocks(ours[r]), _blocks(theirs[r]))
        assert (err <= tol).all(), (r, float(err.max()), tol)
    # each rank's last training forward updated its statistics on its own data, so the ranks
    # differ; the next forward broadcasts rank 0's buffers and they become identical
    assert ours[0]["state"]["bn.running_mean"] != ours[1]["state"]["bn.running_mean"]
    assert ours[0]["synced_buffers"] == ours[1]["synced_buffers"]
    assert ours[1]["synced_buffers"]["bn.running_mean"] == ours[0]["state"]["bn.running_mean"]
    assert theirs[0]["synced_buffers"] == theirs[1]["synced_buffers"]


def test_torchrun_launches_an_unmodified_script():
    port = free_port()
    script = Path(__file__).parent / "distributed_programs" / "init_method.py"
    env = dict(__import__("os").environ, PYTHONPATH=str(Path(__file__).parents[2] / "src"))
    out = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
                          "--master-port", str(port), str(script), "env://"],
                         capture_output=True, text=True, timeout=400, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.count("sum 3.0") == 2
