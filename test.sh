#!/usr/bin/env bash
# Set everything up (idempotent) and run the test suite: `./test.sh [pytest arguments]`.
# Slow sweeps run only with --slow.
set -euo pipefail
cd "$(dirname "$0")"
bash tools/setup.sh
# One worker per core, at most four (a worker's checkpoints and comparison processes take a few
# GB); TORCHNATIVE_TEST_WORKERS overrides, 0 runs in this process. Each worker takes whole files,
# so a module's fixtures (a loaded checkpoint) are built once
cores=$(nproc)
workers=${TORCHNATIVE_TEST_WORKERS:-$(( cores < 4 ? cores : 4 ))}
exec .venv/bin/python -m pytest -n "$workers" --dist loadfile "$@"
