#!/usr/bin/env bash
# Prepares an A/B run of the CUDA benchmark and tests on the device machine
# (docs/cuda.md, "A/B runs"): carry/base holds REV's tree, carry/new the
# working tree's tracked files, carry/debs the -dev packages
# (scripts/gpu_debs.sh). Then run bench/cuda_ab.sh there with carry=["carry"]
# and summarise its output folder with bench/cuda_ab_summary.py.
# Usage: scripts/cuda_ab_prepare.sh [REV]   (default HEAD)
set -euo pipefail
cd "$(dirname "$0")/.."
rev=${1:-HEAD}
rm -rf carry/base carry/new
mkdir -p carry/base carry/new
git archive "$rev" | tar -x -C carry/base
git ls-files -z | xargs -0 tar -c | tar -x -C carry/new
ls carry/debs/*.deb >/dev/null 2>&1 || bash scripts/gpu_debs.sh
du -sh carry
