#!/usr/bin/env bash
# The main job: build a release nextok and explain one sampling step on a
# realistic Qwen3-sized logits row (151,936 ids).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" >/dev/null
mkdir -p build/demo
./build/release/tools/nextok synth-logits --vocab 151936 --out build/demo/qwen3_step.npy
./build/release/tools/nextok explain --logits build/demo/qwen3_step.npy \
  --temperature 0.7 --top-p 0.9 --top-k 50 --min-p 0.05 \
  --repetition-penalty 1.1 --history 101,202,303,101 --seed 42 "$@"
