#!/usr/bin/env bash
# Build the pure wheels into dist/ (see tools/build_wheels.py): `pip install dist/*.whl` into a
# clean environment gives `import torch` on torchnative's _C.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
exec "$PY" tools/build_wheels.py "$@"
