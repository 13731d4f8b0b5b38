#!/usr/bin/env bash
# A/B on the device machine (scripts/cuda_ab_prepare.sh made carry/): base
# against new, both built here side by side from carry/debs; B = 1 three times
# interleaved, B = 64 and 256 once each, then the CUDA tests on new. Runs from
# the repo root; results under $OUT (bench/cuda_ab_summary.py reads them).
set -u
OUT=${OUT:-/tmp/cuda_ab}
mkdir -p "$OUT"
t0=$(date +%s)
log() { echo "[$(($(date +%s) - t0))s] $*" | tee -a "$OUT/progress.txt"; }
nvidia-smi --query-gpu=name,clocks.max.sm,driver_version --format=csv,noheader | tee "$OUT/progress.txt"
root=$PWD
for t in base new; do
  mkdir -p carry/$t/carry
  ln -sfn "$root/carry/debs" carry/$t/carry/debs
done
log "build new"
(cd carry/new && scripts/gpu_build.sh build/r nextok_cuda_tests nextok_cuda_bench >"$OUT/build_new.log" 2>&1; echo "new rc=$?" >>"$OUT/build_new.log") &
pn=$!
sleep 15
log "build base"
(cd carry/base && scripts/gpu_build.sh build/r nextok_cuda_bench >"$OUT/build_base.log" 2>&1; echo "base rc=$?" >>"$OUT/build_base.log") &
pb=$!
wait $pn $pb
log "built"; tail -n 3 "$OUT/build_new.log" "$OUT/build_base.log"
bb=$(find carry/base/build/r -name nextok_cuda_bench -type f | head -1)
nb=$(find carry/new/build/r -name nextok_cuda_bench -type f | head -1)
nt=$(find carry/new/build/r -name nextok_cuda_tests -type f | head -1)
log "bins: $bb $nb $nt"
for i in 1 2 3; do
  for t in base new; do
    b=$bb; [ $t = new ] && b=$nb
    log "B=1 run $i $t"
    timeout 90 "$b" 50 1 | sed "s/^/$t $i /" >>"$OUT/b1.txt" 2>&1 || log "rc=$? ($t $i)"
  done
done
for t in base new; do
  b=$bb; [ $t = new ] && b=$nb
  log "B=64,256 $t"
  timeout 120 "$b" 50 64,256 | sed "s/^/$t /" >>"$OUT/big.txt" 2>&1 || log "rc=$? ($t big)"
done
left=$((440 - ($(date +%s) - t0)))
log "tests (timeout ${left}s)"
timeout $left "$nt" --gtest_brief=1 >"$OUT/tests.txt" 2>&1
log "tests rc=$?"
tail -n 5 "$OUT/tests.txt"
log "done"
