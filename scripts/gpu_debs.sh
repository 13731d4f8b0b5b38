#!/usr/bin/env bash
# Downloads the Debian packages the CUDA tests and benchmark build against
# into carry/debs, for a GPU machine that has CUDA, CMake and Python but
# none of the -dev packages (simdjson, PCRE2, utf8proc, GoogleTest, Google
# Benchmark, CLI11, nlohmann-json, zlib). scripts/gpu_build.sh unpacks them
# there into a private prefix. Needs apt (Debian 12) where it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p carry/debs
cd carry/debs
apt-get download libgtest-dev libgmock-dev googletest libbenchmark-dev libbenchmark1debian \
  libcli11-dev nlohmann-json3-dev libsimdjson-dev libsimdjson14 libpcre2-dev libpcre2-8-0 \
  libpcre2-16-0 libpcre2-32-0 libpcre2-posix3 libutf8proc-dev libutf8proc2 zlib1g-dev
ls
