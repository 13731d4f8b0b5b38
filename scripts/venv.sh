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
# Packages read only for the JSON schemas they ship (the oracle's corpora):
# installed without their dependencies, never imported.
.venv/bin/python -m pip install -q --no-deps kubernetes-validate cfn-lint validate-pyproject-schema-store nbformat
