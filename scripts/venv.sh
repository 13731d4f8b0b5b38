#!/usr/bin/env bash
# Creates .venv with the Python oracles (mlx-lm on CPU, numpy, pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r tests/python/requirements.txt
