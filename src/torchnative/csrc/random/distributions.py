"""The element-wise CPU samplers of upstream 2.13 (DistributionTemplates.h, DistributionsHelper.h,
TransformationHelper.h), stream for stream and bit for bit.

Each function takes a ``CPUGeneratorState``, a shape and a dtype (numpy dtype or tag such as
'float32', 'bfloat16'), and returns a new C-contiguous numpy array filled as upstream fills a
contiguous tensor of that shape. Facts that decide the bits:

* ``random()`` is one 32-bit word, ``random64()`` two (first word high). A float uniform keeps the
  low 24 bits of ``random()``, a double uniform the low 53 bits of ``random64()``.
* Every ``x * y + z`` upstream writes is fused by the compiler in its AVX2/AVX512 builds; in its
  DEFAULT build uniform_'s, cauchy_'s and normal_'s scalar path's are not (``contracted32``/
  ``contracted64`` follow the capability in force) while normal_fill's (>= 16 contiguous values)
  still are (measured bit for bit on both).
* The distributions that work in double (normal's scalar path, bernoulli with scalar p,
  exponential, geometric, cauchy, log_normal) call glibc's libm and cast the double to the
  output dtype (through float for Half/BFloat16).
"""

from __future__ import annotations

import functools
import math
from numbers import Number

import numpy as np

from . import dtypes as dt
from .normal_fill32 import fill_from_words, normal_fill_words
from ..platform import cpu_capability, libm_arrays as C
from .fpmath import F32, F64, contracted32, contracted64, fma32, fma32_rounded, fma64, libmf

_MASK24 = np.uint32((1 << 24) - 1)
_MASK53 = np.uint64((1 << 53) - 1)
_INT64_MIN = -(1 << 63)
_CHUNK = 1 << 15  # lanes per step of the chunked samplers: their temporaries stay in cache
_FEW = 64  # up to this many draws Python numbers beat numpy's per-call costs
_HIGH21 = (1 << 21) - 1  # the bits of random64's high word a 53-bit uniform keeps


def _shape(shape) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def _numel(shape) -> int:
    return math.prod(shape)


def uniform_float(gen, n: int, out: np.ndarray | None = None) -> np.ndarray:
    """n ``uniform_real_distribution<float>(0, 1)`` draws: [0, 1) on a 2**-24 grid, into ``out``
    when given (the words' low 24 bits converted and scaled in one float32 pass, both exact)."""
    w = gen.random(n)
    w &= _MASK24
    return np.multiply(w, F32(2.0 ** -24), out=out, dtype=F32, casting="unsafe")


def uniform_double(gen, n: int) -> np.ndarray:
    """n ``uniform_real_distribution<double>(0, 1)`` draws: [0, 1) on a 2**-53 grid, a
    cache-sized chunk at a time (k < 2**53 converts exactly; the scaling is exact). A few draws
    put random64's words together on Python ints (``few_doubles``)."""
    if n <= _FEW:
        return np.array(few_doubles(gen, n), F64)
    out = np.empty(n, F64)
    for lo in range(0, n, _CHUNK):
        v = gen.random64(min(_CHUNK, n - lo))
        v &= _MASK53
        np.multiply(v, 2.0 ** -53, out=out[lo:lo + v.size], dtype=F64)
    return out


def few_doubles(gen, n: int) -> list[float]:
    """``uniform_double``'s n draws as Python floats: random64's two words, the first as the
    high half, put together on Python ints."""
    w = gen.random(2 * n).tolist()
    return [((w[i] & _HIGH21) << 32 | w[i + 1]) * 2.0 ** -53 for i in range(0, 2 * n, 2)]


# ============================================ random_ ============================================

def _default_random(gen, n: int, name: str) -> np.ndarray:
    """``uniform_int_distribution<T>``: [0, max] for integers, [0, 2**digits] for floats."""
    if name in ("uint16", "uint32", "uint64"):
        raise RuntimeError(f'"random_kernel_cpu" not implemented for \'{dt.SCALAR_NAME[name]}\'')
    if name in ("int64", "float64"):
        v = gen.random64(n)
        mod = np.uint64((1 << 63) if name == "int64" else (1 << 53) + 1)
        return dt.from_int64((v % mod).astype(np.int64), name)
    v = gen.random(n)
    if name == "bool":
        return (v & np.uint32(1)).astype(bool)
    mod = (1 << dt.FLOATS[name]) + 1 if name in dt.FLOATS else dt.INTS[name][1] + 1
    return dt.from_int64((v.astype(np.uint64) % np.uint64(mod)).astype(np.int64), name)


def _to_int64(value: float) -> int:
    """``static_cast<int64_t>`` of a float value, with x86's answer (INT64_MIN) when out of range."""
    return int(value) if -2.0 ** 63 <= value < 2.0 ** 63 else _INT64_MIN


def _round_trip(value: int, name: str) -> int:
    return _to_int64(float(dt.from_int64(np.array([value], np.int64), name)[0]))


def _update_from(frm: int, name: str) -> int:
    """Move ``from`` right until the cast to the float dtype cannot round below it."""
    plus1 = _round_trip(frm + 1, name)
    if plus1 < frm:
        n = abs(frm + 1).bit_length() - 1
        frm = plus1 + (1 << (n - dt.FLOATS[name] + 1))
    return frm


def _update_to(to: int, name: str) -> int:
    minus1 = _round_trip(to - 1, name)
    if minus1 >= to:
        n = abs(to - 1).bit_length() - 1
        to = minus1 - (1 << (n - dt.FLOATS[name] + 1))
    return to


def _check_in_range(frm: int, to_inc: int, name: str) -> None:
    if name in dt.FLOATS:
        lo, hi = dt.float_range(name)
    elif name == "uint64":
        lo, hi = 0, (1 << 63) - 1
    else:
        lo, hi = dt.INTS[name]
    for var, label in ((frm, "from"), (to_inc, "to - 1")):
        if not lo <= var <= hi:
            raise RuntimeError(f"{label} is out of bounds for {dt.META_NAME[name]}")


def _random_from_to_kernel(gen, n: int, name: str, rng: int, base: int) -> np.ndarray:
    """``uniform_int_from_to_distribution``: ``(v % range) + base``; 64-bit draws when
    range >= 2**28 (upstream accepts ~5% modulo skew below that)."""
    if rng >= (1 << 28):
        v = gen.random64(n)
        out = (v % np.uint64(rng)) + np.uint64(base & 0xFFFFFFFFFFFFFFFF)  # uint64 wrap == C++
        return dt.from_int64(out.view(np.int64), name)
    # 32-bit words and a range below 2**28: the same remainder in uint32 (cheaper), and
    # base + remainder <= to - 1 cannot wrap in int64; a cache-sized chunk at a time (a few
    # draws on Python ints)
    if n <= _FEW:
        return dt.from_int64(np.array([w % rng + base for w in gen.random(n).tolist()], np.int64),
                             name)
    out = np.empty(n, np.int64)
    for lo in range(0, n, _CHUNK):
        r = gen.random(min(_CHUNK, n - lo))
        np.remainder(r, np.uint32(rng), out=r)
        np.add(r, np.int64(base), out=out[lo:lo + r.size])
    return dt.from_int64(out, name)


def random_(gen, shape, dtype="int64", from_=None, to=None) -> np.ndarray:
    """``Tensor.random_()``, ``random_(to)`` (pass ``from_=0``) and ``random_(from, to)``."""
    shape, name = _shape(shape), dt.name_of(dtype)
    n = _numel(shape)
    if from_ is None and to is None:
        return _default_random(gen, n, name).reshape(shape)
    frm = 0 if from_ is None else int(from_)
    if to is not None:
        to = int(to)
        if not frm < to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={frm} >= to={to}")
        if name in dt.FLOATS:
            frm, to = _update_from(frm, name), _update_to(to, name)
            if not frm < to:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than 'to' casted to "
                                   f"dtype, but got from={frm} >= to={to}")
        _check_in_range(frm, to - 1, name)
        rng = (to - frm) & 0xFFFFFFFFFFFFFFFF
    elif frm != _INT64_MIN:
        if name in dt.FLOATS:
            to_inc = min(1 << dt.FLOATS[name], (1 << 63) - 1)
            frm = _update_from(frm, name)
            if not frm < to_inc:
                raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to "
                                   f"'to_inc' casted to dtype, but got from={frm} > to_inc={to_inc}")
        else:
            to_inc = min(dt.INTS[name][1], (1 << 63) - 1)
        _check_in_range(frm, to_inc, name)
        rng = (to_inc - frm + 1) & 0xFFFFFFFFFFFFFFFF
    else:  # [int64 min, int64 max]: the whole 64-bit word
        if name not in ("int64", "float64", "float32", "bfloat16"):
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, double, float and bfloat16")
        return dt.from_int64(gen.random64(n).view(np.int64), name).reshape(shape)
    if n == 0:
        return np.empty(shape, dt.np_dtype(name))
    return _random_from_to_kernel(gen, n, name, rng, frm).reshape(shape)


def randint(gen, low: int, high: int, shape, dtype="int64") -> np.ndarray:
    """``torch.randint(low, high, size)``: ``random_(low, high)`` on a fresh tensor."""
    return random_(gen, shape, dtype, low, high)


# ============================================ uniform_ ===========================================

def uniform_(gen, shape, dtype="float32", a: float = 0.0, b: float = 1.0,
             out: np.ndarray | None = None) -> np.ndarray:
    """``uniform_(a, b)``: ``fma(u, to - from, from)`` in opmath (float for 16-bit floats), then a
    value that rounds up to ``to`` in the output dtype is replaced by ``from``."""
    if dtype == "float32" and a == 0.0 and b == 1.0 and type(shape) is tuple:
        # [0, 1): ``u * 1 + 0`` is ``u`` itself, fused or not, and never reaches ``to``
        n = _numel(shape)
        return uniform_float(gen, n, _into(out, n, "float32")).reshape(shape)
    shape, name = _shape(shape), dt.name_of(dtype)
    if name not in dt.FLOATS:
        raise RuntimeError(f'"check_uniform_bounds" not implemented for \'{dt.SCALAR_NAME[name]}\'')
    lo, hi = dt.float_range(name)
    a, b = float(a), float(b)
    if not lo <= a <= hi:
        raise RuntimeError(f"from is out of bounds for {dt.META_NAME[name]}")
    if not lo <= b <= hi:
        raise RuntimeError(f"to is out of bounds for {dt.META_NAME[name]}")
    if not a <= b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
    if not b - a <= hi:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{dt.SCALAR_NAME[name]}>::max(), "
                           f"but found to={b} and from={a} which result in to-from to exceed the limit")
    n = _numel(shape)
    if name == "float64":
        out = contracted64(uniform_double(gen, n), b - a, a)
    else:
        out = dt.from_float32(_uniform_scaled_f32(gen, n, F32(b) - F32(a), F32(a), _into(out, n, name)), name)
    if _top_reaches(name, a, b):
        to_s = dt.scalar_to(b, name)
        hit = out == to_s
        if _ANY(hit):
            out[hit] = dt.scalar_to(a, name)
    return out.reshape(shape)


_ANY = np.logical_or.reduce  # ndarray.any's Python wrapper costs more than the pass


@functools.lru_cache(maxsize=256)
def _top_reaches(name: str, a: float, b: float) -> bool:
    """Whether some draw of ``uniform_(a, b)`` can come out as ``to`` in dtype ``name``: the
    largest uniform's value does (the transform and the roundings are monotone, so it bounds
    every other). [0, 1) never does, and its draws skip the pass that looks for ``to``."""
    if name == "float64":
        top = float(contracted64(np.array([1.0 - 2.0 ** -53]), b - a, a)[0])
    else:
        top32 = contracted32(np.array([1.0 - 2.0 ** -24], F32), F32(b) - F32(a), F32(a))
        top = float(dt.from_float32(np.asarray(top32, F32).reshape(1), name)[0])
    return top >= dt.scalar_to(b, name)


def _lowest_bit(v: float) -> float:
    """The value of the lowest set bit of a finite float (inf for zero)."""
    if v == 0:
        return math.inf
    m, e = math.frexp(abs(v))
    bits = int(m * 2.0 ** 53)  # v == bits * 2**(e - 53)
    return math.ldexp(bits & -bits, e - 53)


@functools.lru_cache(maxsize=256)  # a model's initializers reuse a few ranges
def _sum_is_exact(width: float, frm: float) -> bool:
    """Whether ``k * 2**-24 * width + frm`` is exact in float64 for every k < 2**24: all its
    terms are multiples of the smallest lowest bit, and the sum stays below 2**53 of those."""
    q = min(_lowest_bit(width) * 2.0 ** -24, _lowest_bit(frm))
    return q == math.inf or abs(frm) + abs(width) < 2.0 ** 53 * q


def _into(out: np.ndarray | None, n: int, name: str) -> np.ndarray | None:
    """``out`` if a float32 sampler may write its n values straight there (a contiguous float32
    array of n elements, the caller's tensor), else None (the sampler makes its own)."""
    if (out is not None and name == "float32" and out.dtype == F32 and out.size == n
            and out.flags.c_contiguous):
        return out.reshape(-1)
    return None


def _uniform_scaled_f32(gen, n: int, width: F32, frm: F32, out: np.ndarray | None = None) -> np.ndarray:
    """``u * width + frm`` in float32 for n float uniforms u of ``gen``'s words, rounded as
    ``contracted32`` rounds it, a cache-sized chunk at a time. ``u = k * 2**-24`` is exact in
    float32 and float64 alike; when the float64 sum is exact too (``_sum_is_exact``: the usual
    case) rounding it is the fused result and needs no check."""
    out = np.empty(n, F32) if out is None else out
    fused = cpu_capability.CONTRACTS_FMA
    exact = fused and _sum_is_exact(float(width), float(frm))
    scale, f64 = float(width) * 2.0 ** -24, np.float64(frm)
    if exact and n <= _FEW:  # the same sums on Python floats, each rounded once into ``out``
        f = float(frm)
        out[:] = [(k & 0xFFFFFF) * scale + f for k in gen.random(n).tolist()]
        return out
    t = np.empty(min(n, _CHUNK), F64)
    for lo in range(0, n, _CHUNK):
        k = gen.random(min(_CHUNK, n - lo))
        k &= _MASK24
        if exact:  # single-dtype passes: numpy buffers an operand it casts in a mixed one
            tk = t[:k.size]
            np.copyto(tk, k)
            tk *= scale  # exact: 24 bits times 24 bits
            tk += f64  # exact (_sum_is_exact)
            np.copyto(out[lo:lo + k.size], tk, casting="same_kind")  # the one rounding
        elif fused:
            u = k.astype(F64)
            u *= 2.0 ** -24
            out[lo:lo + k.size] = fma32_rounded(u, np.float64(width), f64, None)
        else:
            u = k.astype(F32)
            u *= F32(2.0 ** -24)
            u *= width
            u += frm
            out[lo:lo + k.size] = u
    return out


# ============================================ normal_ ============================================

_TWO_PI = 2.0 * math.pi
_SCALAR_PAIRS = 32  # up to this many pairs Python floats beat the arrays' per-call setup


def box_muller(u1: float, u2: float) -> tuple[float, float]:
    """``normal_distribution<double>``'s transform of two double uniforms, on Python floats
    (``math`` calls glibc's double functions, as upstream does): ``(r cos theta, r sin theta)``,
    the second cached for the next draw."""
    r = math.sqrt(-2.0 * math.log1p(-u2))
    theta = _TWO_PI * u1
    return r * math.cos(theta), r * math.sin(theta)


def normal_double_stream(gen, n: int, mean: float, std: float) -> np.ndarray:
    """n draws of ``normal_distribution<double>(mean, std)``: Box-Muller on two double uniforms,
    the sine half cached in the generator for the next draw (across calls, as upstream)."""
    if n == 0:
        return np.empty(0, F64)
    if n <= 2 * _SCALAR_PAIRS:
        return _scalar_stream(gen, n, mean, std)
    raw = []
    if gen.next_double_normal is not None:
        raw.append(np.array([gen.next_double_normal]))
        gen.next_double_normal = None
    need = n - sum(len(r) for r in raw)
    if need > 0:
        pairs = (need + 1) // 2
        u = uniform_double(gen, 2 * pairs).reshape(pairs, 2)  # u1 then u2, per pair
        r = np.sqrt(-2.0 * C.log1p(-u[:, 1]))
        theta = _TWO_PI * u[:, 0]
        both = np.stack([r * C.cos(theta), r * C.sin(theta)], axis=1).ravel()
        if need % 2:
            gen.next_double_normal = float(both[-1])
            both = both[:-1]
        raw.append(both)
    return contracted64(raw[0] if len(raw) == 1 else np.concatenate(raw), std, mean)


def _scalar_stream(gen, n: int, mean: float, std: float) -> np.ndarray:
    """``normal_double_stream`` of a few draws on Python floats: the array path's uniforms,
    Box-Muller and cached sample, and its ``* std + mean`` where Python's float arithmetic rounds
    as the array path does (a unit ``std`` leaves one rounding, of the sum; with a zero ``mean``
    fma64 itself rounds the product and adds the zero; without contraction both sides round
    twice); otherwise the fused step."""
    values = []
    if gen.next_double_normal is not None:
        values.append(gen.next_double_normal)
        gen.next_double_normal = None
    need = n - len(values)
    if need > 0:
        u = few_doubles(gen, need + need % 2)
        for i in range(0, len(u), 2):
            values.extend(box_muller(u[i], u[i + 1]))
        if need % 2:
            gen.next_double_normal = values.pop()
    if std == 1.0 or mean == 0.0 or not cpu_capability.CONTRACTS_FMA:
        return np.array([v * std + mean for v in values], F64)
    return contracted64(np.array(values, F64), std, mean)


def _normal_fill_double(gen, n: int, mean: float, std: float) -> np.ndarray:
    """``normal_fill`` for double: all n uniforms first, Box-Muller in blocks of 16 (lanes 0-7
    cos, 8-15 sin), and when n % 16 != 0 the last 16 slots are redrawn and transformed."""
    def fill16(blocks):
        u1, u2 = 1.0 - blocks[:, :8], blocks[:, 8:]
        radius = np.sqrt(-2.0 * C.log(u1))
        theta = (2.0 * math.pi) * u2
        return np.concatenate([fma64(radius * C.cos(theta), std, mean),
                               fma64(radius * C.sin(theta), std, mean)], axis=1)
    return _fill_blocks(uniform_double(gen, n), n, fill16, lambda: uniform_double(gen, 16))


def _normal_fill16_f32_scalar(blocks: np.ndarray, mean: float, std: float) -> np.ndarray:
    """``normal_fill_16<float>`` of the DEFAULT build: glibc's logf/cosf/sinf, float arithmetic,
    theta computed in double (``2.0f * pi<double> * u2``), and the final ``* std + mean`` fused
    (measured: normal_fill keeps its fused multiply-add under ATEN_CPU_CAPABILITY=default, where
    uniform_ and normal_'s scalar path lose theirs)."""
    u1, u2 = F32(1) - blocks[:, :8], blocks[:, 8:]
    radius = np.sqrt(F32(-2) * libmf("logf", u1))
    theta = ((2.0 * math.pi) * u2.astype(F64)).astype(F32)
    m, s = F32(mean), F32(std)
    return np.concatenate([fma32(radius * libmf("cosf", theta), s, m),
                           fma32(radius * libmf("sinf", theta), s, m)], axis=1)


def _normal_fill_f32(gen, n: int, mean: float, std: float, draws_tail: bool,
                     out: np.ndarray | None = None) -> np.ndarray:
    """normal_fill (the AVX2 Box-Muller) of n >= 16 float32 values straight from the words:
    the whole blocks, then, when n % 16 != 0, the last 16 slots from 16 fresh words. A float32
    tensor has drawn its partial tail's uniforms with the rest first (``draws_tail``); the
    16-bit floats' float buffer has not."""
    out = np.empty(n, F32) if out is None else out
    normal_fill_words(gen, n, mean, std, out)
    if n % 16:
        if draws_tail:
            gen.random(n % 16)
        tail = np.empty(16, F32)
        fill_from_words(gen.random(16), tail, mean, std)
        out[n - 16:] = tail
    return out


def _fill_blocks(data, n, fill16, draw16):
    nb = n // 16
    head = data[:nb * 16].reshape(nb, 16)
    head[...] = fill16(head)
    if n % 16:
        data[n - 16:] = fill16(draw16().reshape(1, 16)).ravel()
    return data


def normal_(gen, shape, dtype="float32", mean: float = 0.0, std: float = 1.0,
            contiguous: bool = True, out: np.ndarray | None = None) -> np.ndarray:
    """``normal_(mean, std)``. A contiguous tensor of >= 16 elements takes ``normal_fill``
    (float: the AVX2 Box-Muller on float uniforms; double: glibc on double uniforms);
    anything else takes the scalar double path with the cached second sample.
    ``contiguous=False`` selects the scalar path, in the output's iteration order. A float32
    ``out`` of n elements may receive the vectorised fill directly (see ``_into``)."""
    shape, name = _shape(shape), dt.name_of(dtype)
    if name not in dt.FLOATS:
        raise RuntimeError(f'"normal_kernel_cpu" not implemented for \'{dt.SCALAR_NAME[name]}\'')
    mean, std = float(mean), float(std)
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    n = _numel(shape)
    if n >= 16 and contiguous:
        if name == "float64":
            return _normal_fill_double(gen, n, mean, std).reshape(shape)
        if cpu_capability.SIMD_MATH:
            res = _normal_fill_f32(gen, n, mean, std, name == "float32", _into(out, n, name))
            return dt.from_float32(res, name).reshape(shape)
        if name == "float32":
            data = uniform_float(gen, n)
        else:  # Half/BFloat16 fill a float buffer block by block: only whole blocks are drawn
            data = np.empty(n, F32)  # first, and the partial tail is covered by the redraw
            data[:n - n % 16] = uniform_float(gen, n - n % 16)
        out = _fill_blocks(data, n, lambda b: _normal_fill16_f32_scalar(b, mean, std),
                           lambda: uniform_float(gen, 16))
        return dt.from_float32(out, name).reshape(shape)
    return dt.from_double(normal_double_stream(gen, n, mean, std), name).reshape(shape)


# =========================================== bernoulli_ ==========================================

def bernoulli_(gen, shape, dtype="float32", p=0.5) -> np.ndarray:
    """``bernoulli_(p)``. A scalar p (and a float64 p tensor) compares a double uniform
    (random64) with p; a float/half/bfloat16 p tensor compares a float uniform (random()).
    A p array is broadcast to ``shape``."""
    shape, name = _shape(shape), dt.name_of(dtype)
    if name in ("uint16", "uint32", "uint64"):
        raise RuntimeError(f'"bernoulli_scalar_cpu_" not implemented for \'{dt.SCALAR_NAME[name]}\'')
    n = _numel(shape)
    if isinstance(p, Number):
        p = float(p)
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        out = np.empty(n, dt.np_dtype(name))  # 0 and 1 convert exactly to every dtype
        # u = k * 2**-53 < p exactly when the integer k is below p * 2**53 (exact: a power of
        # two's scaling), so the words are compared without making the doubles
        below = np.uint64(math.ceil(p * 2.0 ** 53))
        for lo in range(0, n, _CHUNK):
            k = gen.random64(min(_CHUNK, n - lo))
            k &= _MASK53
            out[lo:lo + k.size] = k < below
        return out.reshape(shape)
    p = np.broadcast_to(np.asarray(p), shape).reshape(-1)
    pname = dt.name_of(p.dtype)
    if pname not in dt.FLOATS:
        raise RuntimeError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{dt.SCALAR_NAME[pname]}\'')
    pf = p.astype(F64 if pname == "float64" else F32)
    if not ((pf >= 0) & (pf <= 1)).all():
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    u = uniform_double(gen, n) if pname == "float64" else uniform_float(gen, n)
    return (u < pf).astype(dt.np_dtype(name)).reshape(shape)  # 0 and 1: exact in every dtype


# ============================ exponential_, geometric_, cauchy_, log_normal_ =====================

def _require_float(name: str, what: str) -> None:
    if name not in dt.FLOATS:
        raise RuntimeError(f"{what} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {dt.SCALAR_NAME[name]}")


def exponential_(gen, shape, dtype="float32", lambd: float = 1.0) -> np.ndarray:
    """``exponential_(lambd)``: ``(-1 / lambd) * log1p(-u)`` in double."""
    shape, name = _shape(shape), dt.name_of(dtype)
    lambd = float(lambd)
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    _require_float(name, "Exponential")
    u = uniform_double(gen, _numel(shape))
    return dt.from_double((-1.0 / lambd) * C.log1p(-u), name).reshape(shape)


def geometric_(gen, shape, dtype="float32", p: float = 0.5) -> np.ndarray:
    """``geometric_(p)``: ``ceil(log(u) / log1p(-p))`` in double, then cast (integers truncate)."""
    shape, name = _shape(shape), dt.name_of(dtype)
    p = float(p)
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    if name == "bool" or name.startswith("uint") and name != "uint8":
        raise RuntimeError(f'"geometric_cpu" not implemented for \'{dt.SCALAR_NAME[name]}\'')
    u = uniform_double(gen, _numel(shape))
    logu = np.where(u > 0, C.log(np.where(u > 0, u, 1.0)), -np.inf)  # C's log(0) = -inf
    with np.errstate(all="ignore"):
        return dt.from_double(np.ceil(logu / math.log1p(-p)), name).reshape(shape)


def cauchy_(gen, shape, dtype="float32", median: float = 0.0, sigma: float = 1.0) -> np.ndarray:
    """``cauchy_(median, sigma)``: ``fma(tan(pi * (u - 0.5)), sigma, median)`` in double."""
    shape, name = _shape(shape), dt.name_of(dtype)
    sigma = float(sigma)
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    _require_float(name, "Cauchy")
    u = uniform_double(gen, _numel(shape))
    t = C.tan(math.pi * (u - 0.5))
    return dt.from_double(contracted64(t, sigma, float(median)), name).reshape(shape)


def log_normal_(gen, shape, dtype="float32", mean: float = 1.0, std: float = 2.0) -> np.ndarray:
    """``log_normal_(mean, std)``: ``exp`` of the scalar double normal stream (shares its cache)."""
    shape, name = _shape(shape), dt.name_of(dtype)
    std = float(std)
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    if name not in dt.FLOATS:
        raise RuntimeError(f'"log_normal_cpu" not implemented for \'{dt.SCALAR_NAME[name]}\'')
    x = normal_double_stream(gen, _numel(shape), float(mean), std)
    return dt.from_double(C.exp(x), name).reshape(shape)
