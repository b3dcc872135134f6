#!/usr/bin/env bash
# Set up (idempotent), make sure the default model is installed, start the workbench.
# KGQA_MODEL=smollm2-135m bash scripts/run_app.sh  starts with the small model instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_env.sh
MODEL=${KGQA_MODEL:-qwen2.5-coder-1.5b}
.venv/bin/python -m kgqa_core models install "$MODEL"
export KGQA_MODEL="$MODEL" KGQA_APP_MODEL="$MODEL"
exec .venv/bin/python -m streamlit run app.py --server.headless true "$@"
