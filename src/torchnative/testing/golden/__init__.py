"""The golden harness: agreement with upstream torch 2.13.0, measured across processes.

    python -m torchnative.testing.golden run --suite fast          # CI subset: generate, replay, report
    python -m torchnative.testing.golden run --suite full --md docs/agreement.md   # the full sweep
    python -m torchnative.testing.golden self-test                  # the harness tests itself

Three interpreters, never mixed: upstream's (``.venv-upstream``) generates cases from OpInfo and
records its results; ours (``.venv`` by default, ``--ours-python`` to change) replays them; the
driver (this process, no torch imported) judges and reports. Modules, one concept each:

  codec      values <-> JSON + numpy (layout-faithful inputs, bits for dtypes numpy lacks)
  naming     callables by qualified name (torch.add, torch.Tensor.add_, operator.iadd, ...)
  calls      one call in a worker: rebuild, seed, call, capture result or exception
  generate   worker on upstream: OpInfo samples -> cases with upstream's results
  replay     worker on ours: cases -> ours' results
  workers    chunked worker subprocesses with timeouts and per-entry retry
  tolerance  tolerances derived from upstream's own float32-vs-float64 error
  ties       what is accepted where the op leaves outputs unspecified
  compare    the comparators and the verdict on one case
  selftest   fault injection proving each comparator rejects what it must
  pipeline   generate -> replay -> judge, over the cache in .cache/golden/<suite>/
  report     JSON report and docs/agreement.md
  baseline   the ratchet over tests/golden_baseline.json
"""
