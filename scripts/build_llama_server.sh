#!/usr/bin/env bash
# Builds llama.cpp's llama-server (the anchor of bench/server_anchor.py) from
# the llama.cpp tree vendored in the llama-cpp-python sdist that the tests
# pin, so the server anchor runs the same llama.cpp release as the model
# parity tests. Prints the binary's path. Needs: cmake, a C++ compiler, pip.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(sed -n 's/^llama-cpp-python==//p' tests/python/requirements.txt)
out=build/anchors/llama-server-$version
if [[ ! -x $out/build/bin/llama-server ]]; then
  mkdir -p "$out"
  sdist=$out/llama_cpp_python-$version.tar.gz
  [[ -f $sdist ]] || python3 -m pip download -q --no-deps --no-binary :all: -d "$out" \
    "llama-cpp-python==$version"
  tar -xzf "$sdist" -C "$out"
  src=$out/llama_cpp_python-$version/vendor/llama.cpp
  echo "building llama-server $version (several minutes)" >&2
  # The host's vector extensions, but not AMX: on VMs that report AMX
  # without the kernel enabling its tiles, -march=native builds crash in
  # ggml's AMX matmul.
  isa="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
  if grep -qw avx512f /proc/cpuinfo; then
    isa+=" -DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON"
  fi
  cmake -S "$src" -B "$out/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_SERVER=ON \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    $isa >/dev/null
  cmake --build "$out/build" -j "$(nproc)" --target llama-server >/dev/null
fi
echo "$PWD/$out/build/bin/llama-server"
