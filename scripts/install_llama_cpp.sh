#!/usr/bin/env bash
# Install the llama.cpp backend (llama-cpp-python, pinned in requirements-llama.txt) into a virtualenv.
# The registry has no binary wheel for this platform, so it is built from source ONCE (a few minutes on
# 2 cores) and the wheel is kept in $KGQA_CACHE_DIR/wheels/<cpu> (default ~/.cache/kgqa_workbench):
# a second virtualenv on the same machine installs it in seconds. The build uses this CPU's instruction
# set (GGML_NATIVE), hence a folder per CPU feature set. On failure it says so in one line and exits 1;
# the workbench then runs on transformers.
#   usage: bash scripts/install_llama_cpp.sh [.venv/bin/python]
set -uo pipefail
cd "$(dirname "$0")/.."
VPY=${1:-.venv/bin/python}
REQ=$(grep -E '^llama-cpp-python==' requirements-llama.txt)
VERSION=${REQ#llama-cpp-python==}
if "$VPY" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$VERSION')" 2>/dev/null; then
  exit 0
fi
CPU=$( (uname -m; grep -m1 -E '^(flags|Features)' /proc/cpuinfo 2>/dev/null) | sha256sum | cut -c1-12)
WHEELS="${KGQA_CACHE_DIR:-$HOME/.cache/kgqa_workbench}/wheels/$CPU"
mkdir -p "$WHEELS"
LOG="$WHEELS/build-$VERSION.log"
whl=$(ls "$WHEELS"/llama_cpp_python-"$VERSION"-*.whl 2>/dev/null | head -1)
if [ -z "$whl" ]; then
  echo "Building llama-cpp-python $VERSION from source (once per machine; a few minutes). Log: $LOG"
  export CMAKE_ARGS="-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DGGML_NATIVE=ON"
  export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}
  # -v streams cmake's "[ 42%] Building ..." lines; show those as progress, keep everything in the log
  "$VPY" -m pip wheel -v --disable-pip-version-check --no-deps --no-binary llama-cpp-python \
      -w "$WHEELS" "$REQ" 2>&1 | tee "$LOG" \
    | grep --line-buffered -oE '^\s*\[ *[0-9]+%\]' | awk '{ printf "\r  build %s", $0; fflush() } END { print "" }'
  whl=$(ls "$WHEELS"/llama_cpp_python-"$VERSION"-*.whl 2>/dev/null | head -1)
  if [ -z "$whl" ]; then
    echo "llama-cpp-python could not be built (see $LOG): the workbench will use the transformers backend"
    exit 1
  fi
fi
if ! "$VPY" -m pip install -q --disable-pip-version-check --no-deps "$whl" \
    || ! "$VPY" -m pip install -q --disable-pip-version-check --no-deps $(grep -E '^[a-z].*==' requirements-llama.txt | grep -v '^llama-cpp-python==') \
    || ! "$VPY" -c "import llama_cpp" 2>>"$LOG"; then
  echo "llama-cpp-python $VERSION did not install (see $LOG): the workbench will use the transformers backend"
  exit 1
fi
echo "llama.cpp backend installed (llama-cpp-python $VERSION, wheel cached in $WHEELS)"
