"""Checkpoints both ways: files written by our torch load bit-identically on upstream torch 2.13.0
and vice versa (torch.save zip and legacy formats, safetensors, transformers save_pretrained /
from_pretrained), compared in separate processes.

One scenario (``SCENARIO``) runs on both sides: every stored dtype built from the same bytes,
views sharing a storage, a Parameter, nested containers, an OrderedDict state dict with tied
weights. Each side describes what it built or loaded (dtype, shape, strides, offset, sha256 of
the bytes, and which tensors share a storage); descriptions must be equal. Files written by ours
must also be byte-identical to upstream's for the same objects.
"""

from __future__ import annotations

import io
import pickle
import textwrap
import zipfile

import numpy as np
import pytest

from torchnative.testing import upstream

pytestmark = pytest.mark.skipif(not upstream.available(), reason="upstream torch env missing")

SCENARIO = r'''
import collections, functools, hashlib, io, json, sys
import torch

DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "int16", "int32", "int64",
          "uint8", "bool", "complex64", "complex128", "uint16", "uint32", "uint64",
          "float8_e4m3fn", "float8_e5m2"]


def raw(n, key):
    out, i = b"", 0
    while len(out) < n:
        out += hashlib.sha256(f"{key}:{i}".encode()).digest()
        i += 1
    return out[:n]


def make(dt, shape, key):
    dt = getattr(torch, dt)
    n = 1
    for s in shape:
        n *= s
    data = raw(n * dt.itemsize, key)
    if dt is torch.bool:
        data = bytes(b & 1 for b in data)
    storage = torch.UntypedStorage.from_buffer(data, dtype=torch.uint8)
    return torch.asarray(storage, dtype=dt).reshape(shape)


def build(legacy=False):
    sd = collections.OrderedDict()
    for dt in DTYPES:
        if legacy and getattr(torch, dt) in torch.storage._new_dtypes():
            continue       # the legacy format cannot load these, on upstream either
        sd["t." + dt] = make(dt, (3, 5), dt)     # random bytes: NaN payloads, -0.0, subnormals
    base = make("float32", (4, 6), "base")
    sd["base"] = base
    sd["row"] = base[1]
    sd["cols"] = base[:, 2:5]
    sd["transposed"] = base.t()
    sd["scalar"] = make("int64", (), "scalar")
    sd["empty"] = make("float32", (0, 3), "empty")
    sd["param"] = torch.nn.Parameter(make("float32", (2, 2), "param"))
    sd["grad"] = make("float64", (3,), "grad").requires_grad_(True)
    tied = make("float32", (7, 4), "tied")
    sd["emb.weight"] = tied
    sd["head.weight"] = tied
    sd["nested"] = {"list": [make("int32", (2,), "l0"), (make("float64", (1,), "l1"), "text", 3.5)],
                    "od": collections.OrderedDict(a=make("uint8", (4,), "od"))}
    return sd


def flat_tensors():
    """A flat dict of contiguous, unshared tensors (what safetensors accepts)."""
    return {dt: make(dt, (3, 5), "st." + dt) for dt in DTYPES if dt != "complex128"} | \
        {"scalar": make("int64", (), "st.s")}           # safetensors has no complex128


def walk(obj, path=""):
    if isinstance(obj, torch.Tensor):
        yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from walk(v, f"{path}/{k}")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from walk(v, f"{path}[{i}]")


def describe(obj):
    out, storages = {}, {}
    for path, t in walk(obj):
        st = t.untyped_storage()
        group = storages.setdefault(st.data_ptr() or id(st), len(storages))
        out[path] = dict(type=type(t).__name__, dtype=str(t.dtype), shape=list(t.shape),
                         stride=list(t.stride()), offset=t.storage_offset(),
                         device=str(t.device), requires_grad=t.requires_grad,
                         storage=group if t.device.type != "meta" else None,
                         storage_nbytes=st.nbytes(),
                         sha=None if t.device.type == "meta" else hashlib.sha256(tensor_bytes(t)).hexdigest())
    if isinstance(obj, dict):
        out["@keys"] = [list(obj), type(obj).__name__]
        nested = obj.get("nested")
        if isinstance(nested, dict):
            out["@nested"] = [type(nested["od"]).__name__, list(nested["list"][1][1:])]
    return out


def sha_file(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def error_of(fn):
    try:
        fn()
    except Exception as e:
        return [type(e).__module__ + "." + type(e).__qualname__, str(e)]
    return None


def unsafe():
    """An object a weights-only load must refuse."""
    return {"f": functools.partial(print, 1), "t": make("float32", (2,), "unsafe")}


MAP_LOCATIONS = {"none": None, "str": "cpu", "device": torch.device("cpu"),
                 "dict": {"cpu": "cpu"}, "callable": lambda storage, loc: storage,
                 "meta": "meta"}
'''

UPSTREAM_BYTES = '''
def tensor_bytes(t):
    return t.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
'''

OURS_BYTES = '''
def tensor_bytes(t):
    import numpy as np
    return np.ascontiguousarray(t._np).tobytes()   # internal: independent of other kernels
'''

WRITE = '''
def write(d, tag):
    """Every kind of file this side can write, into directory d; returns their sha256."""
    import safetensors.torch
    sd = build()
    files = {}
    torch.save(sd, f"{d}/{tag}.pt"); files["zip"] = f"{d}/{tag}.pt"
    buf = io.BytesIO(); torch.save(sd, buf)
    open(f"{d}/{tag}_buf.pt", "wb").write(buf.getvalue()); files["zip_buf"] = f"{d}/{tag}_buf.pt"
    torch.save(build(legacy=True), f"{d}/{tag}_legacy.pt", _use_new_zipfile_serialization=False)
    files["legacy"] = f"{d}/{tag}_legacy.pt"
    torch.save(unsafe(), f"{d}/{tag}_unsafe.pt"); files["unsafe"] = f"{d}/{tag}_unsafe.pt"
    safetensors.torch.save_file(flat_tensors(), f"{d}/{tag}.safetensors", metadata={"k": "v"})
    files["safetensors"] = f"{d}/{tag}.safetensors"
    return {k: sha_file(v) for k, v in files.items()}


def read(d, tag):
    """Everything this side reads back from the other side's files."""
    import safetensors.torch
    from safetensors import safe_open
    res = {}
    res["zip"] = describe(torch.load(f"{d}/{tag}.pt"))
    res["zip_buf"] = describe(torch.load(io.BytesIO(open(f"{d}/{tag}_buf.pt", "rb").read())))
    res["zip_mmap"] = describe(torch.load(f"{d}/{tag}.pt", mmap=True))
    res["legacy"] = describe(torch.load(f"{d}/{tag}_legacy.pt"))
    res["legacy_buf"] = describe(torch.load(io.BytesIO(open(f"{d}/{tag}_legacy.pt", "rb").read())))
    res["map_location"] = {k: describe(torch.load(f"{d}/{tag}.pt", map_location=v))
                           for k, v in MAP_LOCATIONS.items()}
    res["unsafe_refused"] = error_of(lambda: torch.load(f"{d}/{tag}_unsafe.pt"))
    res["unsafe_loaded"] = describe(torch.load(f"{d}/{tag}_unsafe.pt", weights_only=False))
    res["safetensors"] = describe(safetensors.torch.load_file(f"{d}/{tag}.safetensors"))
    with safe_open(f"{d}/{tag}.safetensors", framework="pt") as f:
        res["safe_open"] = {"meta": f.metadata(), "keys": sorted(f.keys()),
                            "slice": describe({"s": f.get_slice("float32")[1:3, ::2]}),
                            "tensor": describe({"t": f.get_tensor("bfloat16")})}
    return res
'''


CASES = r'''
def case_writer(d):
    """Raw PyTorchFileWriter use: records of many sizes, str/bytes/storage data, a duplicate
    name, set_min_version, no crc and another alignment, and enough records for libstdc++'s
    unordered_set to rehash several times (the serialization id walks it)."""
    out = {}
    for n in (0, 1, 12, 13, 14, 29, 30, 60, 130, 700):
        b = io.BytesIO()
        w = torch._C.PyTorchFileWriter(b, True, 64)
        for i in range(n):
            name = f"data/{i}" if i % 3 else f"rec_{(i * 7919) % 1000}_{i}"
            payload = (name * (i % 5)).encode()
            if i % 4 == 1:
                w.write_record(name, payload.decode(), len(payload))
            elif i % 4 == 2:
                s = torch.UntypedStorage.from_buffer(payload or b"x", dtype=torch.uint8)
                w.write_record(name, s, len(payload))
            else:
                w.write_record(name, payload, len(payload))
        if n == 13:
            w.set_min_version(7)        # .data/version instead of version
        dup = None
        if n:
            err = error_of(lambda: w.write_record("data/1" if n > 1 else "rec_0_0", b"", 0))
            dup = err[1].split("Tried")[-1]
        w.write_end_of_file()
        out[n] = [w.serialization_id(), hashlib.sha256(b.getvalue()).hexdigest(),
                  sorted(w.get_all_written_records()), dup, w.archive_name()]
    b = io.BytesIO()
    w = torch._C.PyTorchFileWriter(b, False, 4096)
    w.write_record("a", b"abc", 3)
    w.write_record("b", b"", 0)
    w.write_end_of_file()
    out["nocrc"] = [w.serialization_id(), hashlib.sha256(b.getvalue()).hexdigest()]
    return out


def case_reader(d):
    """PyTorchFileReader on upstream's checkpoint: records, sizes, offsets, header offsets,
    computed offsets, serialization id, a storage, and the errors for a missing record and a
    wrong size."""
    r = torch._C.PyTorchFileReader(d + "/up.pt")
    recs = r.get_all_records()
    out = {"records": recs, "id": r.serialization_id(),
           "sizes": [r.get_record_size(n) for n in recs],
           "offsets": [r.get_record_offset(n) for n in recs],
           "headers": [r.get_record_header_offset(n) for n in recs],
           "has": [r.has_record("data.pkl"), r.has_record("nope")],
           "pkl": r.get_record("data.pkl").hex()}
    out["no_read"] = [r.get_record_offset_no_read(h, n, s, 64)
                      for n, h, s in zip(recs, out["headers"], out["sizes"])]
    t = r.get_storage_from_record("data/0", out["sizes"][recs.index("data/0")] // 4,
                                  torch.float32)
    out["storage"] = [str(t.dtype), list(t.shape), t.untyped_storage().nbytes(),
                      t.untyped_storage().resizable()]
    out["errors"] = [error_of(lambda: r.get_record("nope")),
                     error_of(lambda: r.get_storage_from_record("data/0", 1, torch.float64))]
    return out


def case_zip64(d):
    """Past 4 GiB miniz switches to zip64 extra fields and 24-byte data descriptors; a record
    reserved by write_record_metadata (torch.serialization.skip_data) is a hole. A sparse file
    exercises both without writing 4 GiB."""
    p = d + "/z64.pt"
    w = torch._C.PyTorchFileWriter(p)
    w.write_record_metadata("big", 2**32 + 10)
    w.write_record("after", b"xyz", 3)
    w.write_end_of_file()
    with open(p, "rb") as f:
        head = f.read(200)
        f.seek(2**32)
        tail = f.read()
    r = torch._C.PyTorchFileReader(p)
    out = {"size": os.path.getsize(p), "sha": hashlib.sha256(head + tail).hexdigest(),
           "id": w.serialization_id(), "records": r.get_all_records(),
           "after": [r.get_record("after").decode(), r.get_record_offset("after"),
                     r.get_record_header_offset("after")],
           "big": [r.get_record_offset("big"), r.get_record_size("big")]}
    os.remove(p)
    b = io.BytesIO()
    with torch.serialization.skip_data():
        torch.save({"t": make("float32", (2, 3), "skip")}, b)
    out["skip_data"] = hashlib.sha256(b.getvalue()).hexdigest()
    return out


def case_corrupt(d):
    """Damaged archives fail as upstream's do. (A large archive cut short fails in upstream
    through a miniz offset underflow, as a ValueError from the buffer's seek; ours reports the
    missing central directory. Not compared.)"""
    b = open(d + "/up.pt", "rb").read()
    out = {}
    for name, data in [("trailing", b + b"garbage"), ("tiny", b[:10]),
                       ("no_eocd", b"PK\x03\x04" + bytes(300)), ("preview", b"PYTORCH1" + b),
                       ("junk", b"x" * 100), ("head_only", b[:2000])]:
        out[name] = error_of(lambda: torch.load(io.BytesIO(data))) or "ok"
    return out


def case_storage(d):
    """UntypedStorage.from_buffer (byte orders, counts, offsets, bool decoding, errors),
    from_file (private and shared mappings), _byteswap / byteswap."""
    U = torch.UntypedStorage
    b8 = bytes(range(1, 9))
    f, g = d + "/f.bin", d + "/g.bin"
    open(f, "wb").write(b8)
    cases = [lambda: U.from_buffer(b8), lambda: U.from_buffer(b8, dtype=torch.uint8),
             lambda: U.from_buffer(b8, dtype=torch.int16),
             lambda: U.from_buffer(b8, "big", dtype=torch.int32),
             lambda: U.from_buffer(b8, "little", dtype=torch.int32),
             lambda: U.from_buffer(b8, "native", 1, 2, dtype=torch.int16),
             lambda: U.from_buffer(b8, "big", dtype=torch.complex64),
             lambda: U.from_buffer(b8, "big", dtype=torch.bfloat16),
             lambda: U.from_buffer(b8, dtype=torch.bool),
             lambda: U.from_buffer(b8, "big", dtype=torch.bool),
             lambda: U.from_buffer(b8, dtype=torch.float8_e5m2),
             lambda: U.from_buffer(b8, "big", dtype=torch.uint16),
             lambda: U.from_buffer(b8, "sideways", dtype=torch.int16),
             lambda: U.from_buffer(b8[:3], "big", dtype=torch.int16),
             lambda: U.from_buffer(b8, "big", 5, dtype=torch.int16),
             lambda: U.from_buffer(b8, "big", 1, 9, dtype=torch.int16),
             lambda: U.from_buffer(b8, dtype=None),
             lambda: U.from_file(d + "/missing", False, 4),
             lambda: U.from_file(f, False, 100),
             lambda: U.from_file(f, False, 6),
             lambda: U.from_file(f, False)]
    out = []
    for c in cases:
        try:
            st = c()
            out.append(["ok", type(st).__name__, st.tolist(), st.resizable()])
        except Exception as e:
            out.append([type(e).__name__, str(e)])
    st = U.from_file(f, False, 8)
    st[0] = 99                                  # private mapping: the file keeps its bytes
    st2 = U.from_file(g, True, 4)               # shared: created, grown, written through
    st2[1] = 7
    del st2
    out.append([open(f, "rb").read().hex(), open(g, "rb").read().hex()])
    for swap in (lambda s: s._byteswap(4), lambda s: s.byteswap(torch.complex64),
                 lambda s: s.byteswap(torch.int16)):
        st = U.from_buffer(b8, dtype=torch.uint8)
        swap(st)
        out.append(st.tolist())
    return out


def case_big_endian(d):
    """A checkpoint whose byteorder record says "big" (as from an s390x machine): torch.load
    swaps each element's bytes back (complex numbers part by part)."""
    out = {}
    for dt in ("float32", "float64", "int16", "bfloat16", "complex64", "uint8", "bool"):
        b = io.BytesIO()
        torch.save({"t": make(dt, (5,), "be" + dt)}, b)
        b.seek(0)
        r = torch._C.PyTorchFileReader(b)
        big = io.BytesIO()
        w = torch._C.PyTorchFileWriter(big)
        item = getattr(torch, dt).itemsize // (2 if getattr(torch, dt).is_complex else 1)
        for name in r.get_all_records():
            data = r.get_record(name)
            if name == "byteorder":
                data = b"big"
            elif name.startswith("data/"):
                data = b"".join(data[i:i + item][::-1] for i in range(0, len(data), item))
            if name not in ("version", ".data/serialization_id"):
                w.write_record(name, data, len(data))
        w.write_end_of_file()
        big.seek(0)
        out[dt] = hashlib.sha256(tensor_bytes(torch.load(big)["t"])).hexdigest()
    return out


CASE_NAMES = ("writer", "reader", "zip64", "corrupt", "storage", "big_endian")


def run_cases(d, work):
    """``d`` holds upstream's checkpoint; each case writes its files under ``work``."""
    out = {}
    for name in CASE_NAMES:
        sub = f"{work}/{name}"
        os.makedirs(sub, exist_ok=True)
        out[name] = globals()["case_" + name](d if name in ("reader", "corrupt") else sub)
    return json.loads(json.dumps(out).replace(work, "<work>"))   # paths appear in messages
'''

TRANSFORMERS = r'''
def bert_digest(model):
    out = {k: [str(v.dtype), list(v.shape), hashlib.sha256(tensor_bytes(v)).hexdigest()]
           for k, v in model.state_dict().items()}
    out["@tied"] = (model.cls.predictions.decoder.weight.data_ptr()
                    == model.bert.embeddings.word_embeddings.weight.data_ptr())
    return out


def bert_build_and_save(path):
    """A tiny BERT whose output projection is tied to the input embeddings."""
    from transformers import BertConfig, BertForMaskedLM
    torch.manual_seed(0)
    cfg = BertConfig(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=37, vocab_size=99, max_position_embeddings=64)
    m = BertForMaskedLM(cfg)
    m.save_pretrained(path)
    return bert_digest(m)


def bert_load(path, save_to=None):
    from transformers import BertForMaskedLM
    m = BertForMaskedLM.from_pretrained(path)
    if save_to:
        m.save_pretrained(save_to)
    return bert_digest(m)
'''


def _side(side_bytes: str) -> str:
    return SCENARIO + side_bytes + WRITE + CASES + TRANSFORMERS + "\nimport os\n"


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """Two upstream processes around our in-process run: upstream writes; ours builds, writes,
    reads upstream's files and runs the cases; upstream reads ours and runs the cases."""
    import os

    d = str(tmp_path_factory.mktemp("ckpt"))
    up_written = upstream.run_json(_side(UPSTREAM_BYTES) + textwrap.dedent(f"""
        print(json.dumps({{"built": describe(build()), "files": write({d!r}, "up"),
                          "bert": bert_build_and_save({d + "/bert_up"!r})}}))
    """))
    ns: dict = {}
    exec(_side(OURS_BYTES), ns)
    ours = {"built": ns["describe"](ns["build"]()), "files": ns["write"](d, "ours"),
            "read": ns["read"](d, "up")}
    os.makedirs(f"{d}/same_name")
    ns["torch"].save(ns["build"](), f"{d}/same_name/up.pt")
    ours["same_name_zip"] = ns["sha_file"](f"{d}/same_name/up.pt")
    ours["cases"] = ns["run_cases"](d, f"{d}/cases_ours")
    try:   # kept apart: a gap elsewhere in ours then fails only the transformers test
        ours["bert"] = ns["bert_load"](f"{d}/bert_up", save_to=f"{d}/bert_ours")
    except Exception as e:  # noqa: BLE001
        ours["bert"] = f"{type(e).__name__}: {e}"
    up_read = upstream.run_json(_side(UPSTREAM_BYTES) + textwrap.dedent(f"""
        out = {{"read": read({d!r}, "ours"), "own": read({d!r}, "up"),
               "cases": run_cases({d!r}, {d + "/cases_up"!r})}}
        out["bert"] = (bert_load({d + "/bert_ours"!r})
                       if os.path.exists({d + "/bert_ours"!r}) else None)
        print(json.dumps(out))
    """))
    return {"dir": d, "up_written": up_written, "ours": ours, "up_read": up_read, "ns": ns}


def test_scenario_builds_the_same_objects(both):
    # precondition for everything below: both sides start from identical tensors
    assert both["ours"]["built"] == both["up_written"]["built"]
    dtypes = {v["dtype"] for k, v in both["ours"]["built"].items() if not k.startswith("@")}
    assert len(dtypes) >= 17


@pytest.mark.parametrize("kind", ["zip", "zip_buf", "safetensors"])
def test_files_written_by_ours_are_byte_identical(both, kind):
    """Same objects, same archive: headers, 64-byte alignment padding, pickle, data descriptors,
    zip64 trailer and upstream's serialization id. (A .pt file's archive name is its stem, so
    for "zip" ours also wrote the state dict under upstream's file name.)"""
    up, ours = both["up_written"]["files"], both["ours"]["files"]
    assert (both["ours"]["same_name_zip"] if kind == "zip" else ours[kind]) == up[kind]


@pytest.mark.parametrize("kind", ["zip", "zip_buf", "zip_mmap", "legacy", "legacy_buf",
                                  "unsafe_loaded", "safetensors", "safe_open"])
def test_upstream_files_load_on_ours_bit_identically(both, kind):
    assert both["ours"]["read"][kind] == both["up_read"]["own"][kind]


@pytest.mark.parametrize("kind", ["zip", "zip_buf", "zip_mmap", "legacy", "legacy_buf",
                                  "unsafe_loaded", "safetensors", "safe_open"])
def test_our_files_load_on_upstream_bit_identically(both, kind):
    assert both["up_read"]["read"][kind] == both["up_read"]["own"][kind]


def test_loaded_state_dict_is_the_saved_one(both):
    """Values, views (shared storage, offsets, strides), the Parameter, requires_grad, the
    OrderedDict and nested containers all survive: the loaded description is the built one."""
    built, loaded = both["up_written"]["built"], both["ours"]["read"]["zip"]
    assert loaded == built
    for view in ("/row", "/cols", "/transposed"):
        assert loaded[view]["storage"] == loaded["/base"]["storage"]
    assert loaded["/emb.weight"]["storage"] == loaded["/head.weight"]["storage"]   # tied
    assert loaded["/param"]["type"] == "Parameter"
    assert loaded["@keys"][1] == "OrderedDict" and loaded["@nested"][0] == "OrderedDict"


@pytest.mark.parametrize("where", ["none", "str", "device", "dict", "callable", "meta"])
def test_map_location(both, where):
    ours = both["ours"]["read"]["map_location"][where]
    assert ours == both["up_read"]["own"]["map_location"][where]
    assert ours == both["up_read"]["read"]["map_location"][where]


def test_weights_only_refuses_unsafe_pickle_as_upstream(both):
    ours, up = both["ours"]["read"]["unsafe_refused"], both["up_read"]["own"]["unsafe_refused"]
    assert ours is not None and ours[0] == "_pickle.UnpicklingError"
    assert ours == up == both["up_read"]["read"]["unsafe_refused"]


# ---- the container and the storage helpers --------------------------------------------------------

@pytest.mark.parametrize("case", ["writer", "reader", "zip64", "corrupt", "storage",
                                  "big_endian"])
def test_container_and_storage_cases_match_upstream(both, case):
    ours, up = both["ours"]["cases"][case], both["up_read"]["cases"][case]
    assert ours == up
    if case == "reader":
        data = [o for n, o in zip(ours["records"], ours["offsets"]) if n.startswith("data/")]
        assert data and all(o % 64 == 0 for o in data)      # tensor data is 64-byte aligned
        assert ours["no_read"] == ours["offsets"]


def test_reader_reads_archives_from_other_zip_tools(tmp_path):
    """Upstream's reader accepts any zip (even deflated records); so does ours."""
    import torch

    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("arch/version", "3\n")
        z.writestr("arch/data.pkl", pickle.dumps({"a": 1}, protocol=2))
    r = torch._C.PyTorchFileReader(str(path))
    assert r.get_all_records() == ["version", "data.pkl"]
    assert pickle.loads(r.get_record("data.pkl")) == {"a": 1}
    assert r.serialization_id() == ""


def test_reader_and_writer_errors(tmp_path):
    import torch

    with pytest.raises(RuntimeError, match="open file failed because of errno 2 on fopen"):
        torch._C.PyTorchFileReader(str(tmp_path / "missing.pt"))
    with pytest.raises(RuntimeError, match="failed reading zip archive: not a ZIP archive"):
        torch._C.PyTorchFileReader(io.BytesIO(b"not a zip"))
    with pytest.raises(RuntimeError, match="failed reading zip archive: failed finding central"):
        torch._C.PyTorchFileReader(io.BytesIO(b"definitely not a zip archive"))
    w = torch._C.PyTorchFileWriter(str(tmp_path / "v.pt"))
    w.set_min_version(11)
    w.write_end_of_file()
    with pytest.raises(RuntimeError, match="maximum supported version for reading is 10"):
        torch._C.PyTorchFileReader(str(tmp_path / "v.pt"))
    with pytest.raises(RuntimeError, match="INTERNAL ASSERT FAILED"):
        w.write_record("late", b"x", 1)                     # after write_end_of_file
    with pytest.raises(RuntimeError, match="Parent directory .* does not exist"):
        torch._C.PyTorchFileWriter(str(tmp_path / "no" / "x.pt"))


def test_mmap_load_is_a_private_mapping(both):
    import torch

    path = f"{both['dir']}/up.pt"
    sd = torch.load(path, mmap=True)
    st = sd["base"].untyped_storage()
    assert not st.resizable()
    before = open(path, "rb").read()
    st[0] = (st[0] + 1) % 256                         # copy-on-write: the file is untouched
    assert open(path, "rb").read() == before


def test_tensor_metadata():
    import torch

    ns: dict = {}
    exec(SCENARIO + OURS_BYTES, ns)
    t = ns["make"]("complex64", (3,), "meta")
    assert torch._C._get_tensor_metadata(t) == {}
    before = np.array(t._np)
    torch._C._set_tensor_metadata(t, {"conj": True})    # an upstream file's lazy conjugate
    assert t.is_conj() and torch._C._get_tensor_metadata(t) == {"conj": True}
    np.testing.assert_array_equal(t._np, before)  # the bit, not the memory, changed
    np.testing.assert_array_equal(t.resolve_conj().numpy(), np.conj(before))
    with pytest.raises(RuntimeError, match="Unexpected key `bogus` passed to setTensorMetadata"):
        torch._C._set_tensor_metadata(t, {"bogus": True})


# ---- transformers --------------------------------------------------------------------------------

def test_transformers_save_pretrained_from_pretrained_both_ways(both):
    """A tiny BERT with tied input/output embeddings: built and saved by upstream, loaded by
    ours, saved again by ours and loaded by upstream. Every tensor is bit-identical, the
    safetensors file ours writes is byte-identical to upstream's, and the weights stay tied."""
    up, ours, back = both["up_written"]["bert"], both["ours"]["bert"], both["up_read"]["bert"]
    assert isinstance(ours, dict), ours
    assert ours == up
    assert back == up
    assert ours["@tied"] is True
    d, sha = both["dir"], both["ns"]["sha_file"]
    assert sha(f"{d}/bert_ours/model.safetensors") == sha(f"{d}/bert_up/model.safetensors")


SHARED_GEOMETRY_PROGRAM = r"""
import hashlib, io, json, torch
buf = io.BytesIO()
# tensors of one shape made three ways (a factory, another factory, a reshape): their strides
# are equal tuples, which pickle writes out each time for upstream (a new tuple per stride())
torch.save({"a": torch.zeros(2, 3), "b": torch.ones(2, 3), "c": torch.arange(6.).reshape(2, 3),
            "d": torch.arange(6.).reshape(2, 3).t()}, buf)
print(json.dumps(hashlib.sha256(buf.getvalue()).hexdigest()))
"""


def test_tensors_of_one_geometry_save_as_upstream():
    # ours keeps one stride tuple per geometry; a stride() handing that object out let pickle
    # write later ones as back-references, and the file's bytes differed from upstream's
    ours, theirs = upstream.run_both(SHARED_GEOMETRY_PROGRAM)
    assert ours == theirs
