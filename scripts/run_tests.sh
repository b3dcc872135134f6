#!/usr/bin/env bash
# Set up (idempotent) and run the whole test suite with the 135M model. pytest's exit code is kept
# (5 = no tests collected fails the run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
