"""Modes and global state probed identically on upstream torch and on ours (each in its own
process): inference mode and inference tensors, no_grad/enable_grad/set_grad_enabled,
deterministic algorithms, default dtype and device, anomaly mode, Generator state, result_type.
Results are JSON (numbers as float64 lists, errors as "Type: message"); only public API is used.

``python modes_behaviour.py`` prints one JSON object: case name -> result.
"""

from __future__ import annotations

import sys
from pathlib import Path


import numpy as np

# run as a file under upstream, the script finds the shared behaviour helpers in harness/
sys.path.insert(0, str(Path(__file__).resolve().parent / "harness"))
from prelude import err as _err, main, run_cases, vals as _vals  # noqa: E402


def cases(torch):
    def const(*vals):
        return torch.from_numpy(np.array(vals, dtype=np.float64))

    def made_in_inference():
        with torch.inference_mode():
            return const(1.0, 2.0, 3.0) * 2

    # --- inference mode ----------------------------------------------------------------------
    def inference_flags():
        out = [torch.is_inference_mode_enabled()]
        with torch.inference_mode():
            t = torch.ones(2)
            out += [torch.is_inference_mode_enabled(), torch.is_grad_enabled(), t.is_inference(),
                    t.requires_grad]
            with torch.inference_mode(False):
                u = torch.ones(2)
                out += [torch.is_inference_mode_enabled(), torch.is_grad_enabled(),
                        u.is_inference()]
        out += [torch.is_inference_mode_enabled(), torch.is_grad_enabled()]
        return out

    def inference_requires_grad_outside():
        t = made_in_inference()
        return _err(lambda: t.requires_grad_())

    def inference_requires_grad_inside():
        with torch.inference_mode():
            t = torch.ones(2)
            return _err(lambda: t.requires_grad_())

    def inference_inplace_outside():
        t = made_in_inference()
        e = _err(lambda: t.add_(1))
        return [e, _vals(t)]

    def inference_inplace_inside_later():
        t = made_in_inference()
        with torch.inference_mode():
            t.add_(1)
        return _vals(t)

    def inference_out_of_place_outside():
        t = made_in_inference()
        u = t * 3 + 1
        return [u.is_inference(), u.requires_grad, _vals(u)]

    def inference_view_outside():
        t = made_in_inference()
        v = t[1:]
        return [v.is_inference(), _err(lambda: v.mul_(2)), _vals(t)]

    def inference_clone_is_normal():
        c = made_in_inference().clone()
        c.add_(1)
        return [c.is_inference(), c.requires_grad_().requires_grad, _vals(c)]

    def inference_saved_for_backward():
        t = made_in_inference()
        w = const(0.5, -1.0, 2.0).requires_grad_()
        return _err(lambda: (w * t).sum().backward())

    def inference_used_with_grad_add():
        t = made_in_inference()
        w = const(0.5, -1.0, 2.0).requires_grad_()
        (w + t).sum().backward()
        return _vals(w.grad)

    def inference_version_counter():
        t = made_in_inference()
        return _err(lambda: t._version)

    def inference_decorator():
        @torch.inference_mode()
        def f(x):
            return x * 2, torch.is_inference_mode_enabled()

        y, on = f(const(1.0))
        return [on, y.is_inference(), torch.is_inference_mode_enabled()]

    def inference_of_requires_grad_input():
        w = const(1.0, 2.0).requires_grad_()
        with torch.inference_mode():
            y = w * 2
        return [y.requires_grad, y.is_inference(), y.grad_fn is None]

    def inference_set_data():
        t = made_in_inference()
        n = const(5.0)
        return _err(lambda: setattr(n, "data", t))

    # --- grad modes ----------------------------------------------------------------------------
    def no_grad_nesting():
        w = const(1.0).requires_grad_()
        out = []
        with torch.no_grad():
            out.append((w * 2).requires_grad)
            with torch.enable_grad():
                out.append((w * 2).requires_grad)
                with torch.set_grad_enabled(False):
                    out.append((w * 2).requires_grad)
            out.append(torch.is_grad_enabled())
        out.append(torch.is_grad_enabled())
        return out

    def set_grad_enabled_as_function():
        w = const(1.0).requires_grad_()
        prev = torch.is_grad_enabled()
        torch.set_grad_enabled(False)
        a = (w * 2).requires_grad
        torch.set_grad_enabled(True)
        b = (w * 2).requires_grad
        torch.set_grad_enabled(prev)
        return [a, b]

    def no_grad_decorators():
        @torch.no_grad()
        def f(x):
            return x * 2

        @torch.enable_grad()
        def g(x):
            return x * 2

        def gen(x):
            for _ in range(2):
                yield (x * 2).requires_grad

        w = const(1.0).requires_grad_()
        with torch.no_grad():
            inner = g(w).requires_grad
        return [f(w).requires_grad, inner, list(torch.no_grad()(gen)(w))]

    def no_grad_inplace_on_leaf():
        w = const(1.0, 2.0).requires_grad_()
        with torch.no_grad():
            w.mul_(3)
        return [_vals(w), w.requires_grad, w.is_leaf, w._version]

    def grad_mode_views():
        w = const(1.0, 2.0).requires_grad_()
        with torch.no_grad():
            v = w[:1]
        return [v.requires_grad, _err(lambda: v.mul_(2))]

    # --- deterministic algorithms ---------------------------------------------------------
    def deterministic_flags():
        out = [torch.are_deterministic_algorithms_enabled(),
               torch.is_deterministic_algorithms_warn_only_enabled(),
               torch.get_deterministic_debug_mode()]
        torch.use_deterministic_algorithms(True, warn_only=True)
        out += [torch.are_deterministic_algorithms_enabled(),
                torch.is_deterministic_algorithms_warn_only_enabled(),
                torch.get_deterministic_debug_mode()]
        torch.set_deterministic_debug_mode("error")
        out += [torch.is_deterministic_algorithms_warn_only_enabled(),
                torch.get_deterministic_debug_mode()]
        torch.use_deterministic_algorithms(False)
        out += [torch.are_deterministic_algorithms_enabled(), torch.get_deterministic_debug_mode()]
        out.append(_err(lambda: torch.set_deterministic_debug_mode("sometimes")))
        out.append(_err(lambda: torch.use_deterministic_algorithms("yes")))
        return out

    def deterministic_fills_uninitialized():
        torch.use_deterministic_algorithms(True)
        try:
            f = torch.empty(3)
            i = torch.empty(2, dtype=torch.int32)
            b = torch.empty(2, dtype=torch.bool)
            like = torch.empty_like(const(1.0, 2.0))
            return [[str(v) for v in f.tolist()], i.tolist(), b.tolist(),
                    [str(v) for v in like.tolist()],
                    torch.utils.deterministic.fill_uninitialized_memory]
        finally:
            torch.use_deterministic_algorithms(False)

    # --- default dtype and device -------------------------------------------------------
    def default_dtype():
        out = [str(torch.get_default_dtype())]
        torch.set_default_dtype(torch.float64)
        try:
            out += [str(torch.get_default_dtype()), str(torch.tensor([1.0]).dtype),
                    str(torch.ones(2).dtype), str(torch.arange(0.0, 1.0, 0.5).dtype),
                    str(torch.tensor([1j]).dtype), str(torch.tensor([1]).dtype),
                    str((torch.ones(2, dtype=torch.int64) * 1.5).dtype),
                    str(torch.randn(2).dtype), str(torch.nn.Linear(2, 2).weight.dtype)]
        finally:
            torch.set_default_dtype(torch.float32)
        out.append(_err(lambda: torch.set_default_dtype(torch.int32)))
        out.append(str(torch.get_default_dtype()))
        torch.set_default_dtype(torch.float16)
        try:
            out += [str(torch.ones(1).dtype), str(torch.get_default_dtype())]
        finally:
            torch.set_default_dtype(torch.float32)
        return out

    def default_dtype_half_complex():
        torch.set_default_dtype(torch.float16)
        try:
            return str(torch.tensor([1j]).dtype)
        finally:
            torch.set_default_dtype(torch.float32)

    def default_device():
        out = [str(torch.get_default_device())]
        torch.set_default_device("meta")
        try:
            out += [str(torch.get_default_device()), str(torch.ones(2).device),
                    str(torch.empty(2, device="cpu").device), str(torch.arange(3).device)]
        finally:
            torch.set_default_device(None)
        out += [str(torch.get_default_device()), str(torch.ones(1).device)]
        with torch.device("meta"):
            out.append(str(torch.zeros(2).device))
        out.append(str(torch.zeros(2).device))
        return out

    # --- anomaly mode ---------------------------------------------------------------------
    def anomaly_flags():
        out = [torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()]
        with torch.autograd.detect_anomaly():
            out += [torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()]
        with torch.autograd.detect_anomaly(check_nan=False):
            out += [torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()]
        torch.autograd.set_detect_anomaly(True)
        out.append(torch.is_anomaly_enabled())
        torch.autograd.set_detect_anomaly(False)
        out.append(torch.is_anomaly_enabled())
        return out

    def anomaly_nan_in_backward():
        import warnings

        w = const(0.0, 1.0).requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with torch.autograd.detect_anomaly():
                y = (w / w).sum()
                e = _err(lambda: y.backward())
        return e

    def anomaly_without_nan_check():
        w = const(0.0, 1.0).requires_grad_()
        with torch.autograd.detect_anomaly(check_nan=False):
            (w / w).sum().backward()
        return [str(v) for v in w.grad.tolist()]

    # --- generators -----------------------------------------------------------------------
    def generator_round_trip():
        g = torch.Generator().manual_seed(1234)
        s = g.get_state()
        a = torch.randn(4, generator=g, dtype=torch.float64)
        g.set_state(s)
        b = torch.randn(4, generator=g, dtype=torch.float64)
        return [_vals(a) == _vals(b), _vals(a), g.initial_seed(), str(s.dtype), list(s.shape)]

    def global_rng_round_trip():
        torch.manual_seed(7)
        s = torch.get_rng_state()
        a = torch.rand(3, dtype=torch.float64)
        torch.set_rng_state(s)
        b = torch.rand(3, dtype=torch.float64)
        return [_vals(a), _vals(b), torch.initial_seed()]

    def generator_clone_and_fork():
        g = torch.Generator().manual_seed(5)
        torch.rand(2, generator=g)
        h = torch.Generator()
        h.set_state(g.get_state())
        a = torch.rand(3, generator=g, dtype=torch.float64)
        b = torch.rand(3, generator=h, dtype=torch.float64)
        torch.manual_seed(11)
        with torch.random.fork_rng():
            torch.rand(5)
        c = torch.rand(2, dtype=torch.float64)
        torch.manual_seed(11)
        d = torch.rand(2, dtype=torch.float64)
        return [_vals(a) == _vals(b), _vals(c) == _vals(d), _vals(c)]

    def generator_bad_state():
        g = torch.Generator()
        return [_err(lambda: g.set_state(torch.zeros(3, dtype=torch.uint8))),
                _err(lambda: g.set_state(torch.zeros(5056, dtype=torch.float32))),
                _err(lambda: g.set_state([1, 2])), _err(lambda: g.manual_seed(-1))]

    def generator_state_is_a_copy():
        g = torch.Generator().manual_seed(3)
        s = g.get_state()
        torch.rand(4, generator=g)
        s2 = g.get_state()
        return [bool((s == s2).all()), str(g.device), g.seed() >= 0]

    # --- result_type ----------------------------------------------------------------------
    def result_type_scalars():
        f32 = torch.ones(2)
        i64 = torch.ones(2, dtype=torch.int64)
        u8 = torch.ones(2, dtype=torch.uint8)
        b = torch.ones(2, dtype=torch.bool)
        h = torch.ones(2, dtype=torch.float16)
        pairs = [(f32, 1.0), (i64, 1.0), (i64, 1), (u8, -1), (b, True), (b, 2), (h, 1.5),
                 (i64, 1j), (f32, 1j), (1.0, i64), (2, f32), (torch.tensor(1.5, dtype=torch.float64), i64),
                 (f32, torch.tensor(2.0, dtype=torch.float64)), (i64, torch.tensor(2.5))]
        return [str(torch.result_type(a, c)) for a, c in pairs]

    def result_type_errors():
        # the first line of the TypeError: the signature list below it is formatted differently
        return [str(torch.result_type(1, 2.0)), str(torch.result_type(True, 2)),
                _err(lambda: torch.result_type("a", 1)).splitlines()[0]]

    return {k: v for k, v in locals().items()
            if callable(v) and k not in ("const", "made_in_inference")}


def probes(torch):
    return run_cases(cases(torch))


if __name__ == "__main__":
    main(probes, quiet=True)
