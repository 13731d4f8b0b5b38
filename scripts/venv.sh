#!/usr/bin/env bash
# Creates .venv with the Python oracles (mlx-lm on CPU, llama-cpp-python,
# tokenizers, jsonschema, numpy, pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# llama-cpp-python (the llama.cpp oracle) builds from source; skip its extras.
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF}"
.venv/bin/python -m pip install -q -r tests/python/requirements.txt
