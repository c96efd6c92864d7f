#!/usr/bin/env bash
# Set everything up (idempotent) and run the main job: `./run.sh [torchnative arguments]`.
set -euo pipefail
cd "$(dirname "$0")"
bash tools/setup.sh
exec .venv/bin/torchnative "$@"
