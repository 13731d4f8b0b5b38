#!/usr/bin/env bash
# Builds the CUDA tests and benchmark (release, warnings as errors) on a GPU
# machine without the Debian -dev packages: the .deb files that
# scripts/gpu_debs.sh downloaded into carry/debs are unpacked into
# /opt/nextok-deps and found there (CMake configs and pkg-config files).
# Usage: scripts/gpu_build.sh [BUILD_DIR] [TARGET...]
#   default: build/cuda-rel nextok_cuda_tests nextok_cuda_bench
# With nanobind importable (a wheel carried and on PYTHONPATH) the tree also
# configures the Python extension: name the target _nextok to build it.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/cuda-rel}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(nextok_cuda_tests nextok_cuda_bench)
prefix=/opt/nextok-deps
ls carry/debs/*.deb >/dev/null 2>&1 || { echo "no carry/debs/*.deb: run scripts/gpu_debs.sh first" >&2; exit 1; }
mkdir -p "$prefix"
for f in carry/debs/*.deb; do dpkg -x "$f" "$prefix"; done
arch=x86_64-linux-gnu
export PKG_CONFIG_SYSROOT_DIR=$prefix
export PKG_CONFIG_PATH=$prefix/usr/lib/$arch/pkgconfig:$prefix/usr/share/pkgconfig
export LD_LIBRARY_PATH=$prefix/usr/lib/$arch${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# The Python extension too when nanobind imports (carry it as a wheel).
py=()
if python3 -m nanobind --cmake_dir >/dev/null 2>&1; then
  py=(-DNEXTOK_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(command -v python3)")
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNEXTOK_WERROR=ON -DNEXTOK_CUDA=ON \
  -DNEXTOK_BUILD_BENCH=ON "${py[@]}" \
  -DCMAKE_PREFIX_PATH="$prefix/usr" -DCMAKE_BUILD_RPATH="$prefix/usr/lib/$arch" >/dev/null
cmake --build "$dir" -j "$(nproc)" --target "${targets[@]}"
