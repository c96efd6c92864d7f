"""Print the dtype tables of ``torchnative.csrc.core.dtypes`` / ``typeinfo`` / ``promotion`` from upstream.

Run under upstream's interpreter (``.venv-upstream/bin/python tools/gen_dtype_tables.py``); paste
the output over the generated blocks. The tests compare every value against upstream again, so a
stale paste fails loudly.
"""

from __future__ import annotations

import torch


@torch.jit.script
def _scalar_type_index(d: torch.dtype) -> int:  # TorchScript sees a dtype as its ScalarType int
    return d


def _err(f):
    try:
        return f()
    except RuntimeError as e:
        return str(e)


def main():
    dtypes, names = [], {}
    for k, v in vars(torch).items():
        if isinstance(v, torch.dtype):
            if v not in names:
                dtypes.append(v)
            names.setdefault(v, []).append(k)
    dtypes.sort(key=_scalar_type_index)
    short = lambda d: str(d).split(".", 1)[1]

    def cpp_name(d):  # ScalarType's C++ name, read back from an error message that prints it
        other = torch.qint8 if d not in (torch.qint8,) else torch.quint8
        msg = _err(lambda: torch.promote_types(d, other))
        return msg.rsplit("offending types: ", 1)[1].split(" ")[0]

    print("# (index, name, cpp_name, python names, itemsize, is_floating_point, is_complex,")
    print("#  is_signed (bool, or the RuntimeError message), abbr, to_real, to_complex or None)")
    print("_TABLE = (")
    for d in dtypes:
        signed = _err(lambda: d.is_signed)
        cplx = _err(lambda: short(d.to_complex()))
        cplx = None if cplx.startswith("Unknown Complex") else cplx
        row = (_scalar_type_index(d), short(d), cpp_name(d), tuple(names[d]), d.itemsize,
               d.is_floating_point, d.is_complex, signed, d.abbr, short(d.to_real()), cplx)
        print(f"    {row!r},")
    print(")")
    print()
    print("_GET_ALL_DTYPES = " + repr(tuple(short(d) for d in torch._C._get_all_dtypes())))
    print()
    core = "uint8 int8 int16 int32 int64 float16 float32 float64 complex32 complex64 complex128 bool bfloat16".split()
    print("_LOOKUP_ORDER = " + repr(tuple(core)))
    print("_LOOKUP = (")
    for a in core:
        row = " ".join(short(torch.promote_types(getattr(torch, a), getattr(torch, b))) for b in core)
        print(f"    {row!r},")
    print(")")
    print()
    print("# name: (bits, eps, max, min, tiny, smallest_normal, resolution, dtype), floats as hex")
    print("_FINFO = {")
    for d in dtypes:  # complex dtypes report their real type's limits; float4 has none upstream
        if not d.is_floating_point or d == torch.float4_e2m1fn_x2:
            continue
        f = torch.finfo(d)
        vals = (f.bits,) + tuple(float(getattr(f, a)).hex() for a in
                                 ("eps", "max", "min", "tiny", "smallest_normal", "resolution")) + (f.dtype,)
        print(f"    {short(d)!r}: {vals!r},")
    print("}")


if __name__ == "__main__":
    main()
