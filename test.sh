#!/usr/bin/env bash
# Set everything up (idempotent) and run the test suite: `./test.sh [pytest arguments]`.
# Slow sweeps run only with --slow.
set -euo pipefail
cd "$(dirname "$0")"
bash tools/setup.sh
exec .venv/bin/python -m pytest "$@"
