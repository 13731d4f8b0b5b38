#!/usr/bin/env bash
# Prepares the Python packages that bench/cuda_anchor.py needs for its
# FlashInfer and XGrammar anchors, for a GPU machine that has torch, triton and
# nvcc but no network. Run it from the repository root on a machine with
# network access (nothing is installed here):
#
#   bash bench/offline_anchor_wheels.sh [OUTDIR]     # default OUTDIR: .whl
#
# OUTDIR gets wheels of xgrammar, of the dependencies that the GPU image lacks,
# and a trimmed rebuild of the flashinfer-python wheel (same name and version).
#
# The full flashinfer-python wheel (~100 MB, ~700 MB unpacked) bundles CUTLASS,
# the sources of every kernel family and many prebuilt backends. The anchor
# only uses flashinfer.sampling.top_k_top_p_sampling_from_logits, whose kernels
# live in two JIT modules, "sampling" and "topk", so the trimmed copy keeps:
#   - the package's top-level modules and flashinfer/jit, flashinfer/trace,
#   - a package __init__ that imports nothing eagerly (the original one imports
#     every submodule, several of which need cutlass-dsl, cudnn and cuda-python),
#   - data/include (FlashInfer headers), data/cccl (vendored CUB/libcu++ that
#     FlashInfer puts ahead of the toolkit's), data/spdlog, and from data/csrc
#     the shared headers plus the sources of the two modules.
# When nvcc 13 is found here (CUDA_HOME, default /usr/local/cuda), the two
# modules are also compiled ahead of time for sm_90a (H100/H200) with
# FlashInfer's own JIT flags and shipped as data/aot/<module>/<module>.so, which
# FlashInfer loads instead of compiling: on the GPU machine the JIT of "topk"
# alone takes more than 7 minutes. Set AOT=0 to skip this.
# Nothing of it is committed: OUTDIR is ignored by git.
#
# On the GPU machine (a module missing from data/aot is JIT-compiled for sm_90
# only, cached under /tmp):
#   python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir \
#       --upgrade --target /tmp/site .whl/*.whl
#   export PYTHONPATH=/tmp/site FLASHINFER_WORKSPACE_BASE=/tmp \
#       FLASHINFER_CUDA_ARCH_LIST=9.0 FLASHINFER_DISABLE_VERSION_CHECK=1
#   python3 bench/cuda_anchor.py
set -euo pipefail

OUTDIR=${1:-.whl}
AOT=${AOT:-1}
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
FLASHINFER=flashinfer-python==0.7.4
WHEELS=(
  xgrammar==0.2.9
  apache-tvm-ffi==0.1.15.post2
  pydantic==2.14.4
  pydantic-core==2.50.5
  annotated-types==0.8.0
  typing-inspection==0.4.5
  typing-extensions==4.16.0
)
# The GPU machine runs CPython 3.12 on x86-64 Linux.
PLATFORM=(--only-binary=:all: --python-version 3.12 --implementation cp
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64
  --platform manylinux1_x86_64 --platform any)
# Sources of the JIT modules (flashinfer/jit/sampling.py, flashinfer/jit/topk.py;
# the default filter order "top_k_first" uses topk's radix top-k fast path).
SAMPLING_SOURCES=(sampling.cu renorm.cu flashinfer_sampling_binding.cu)
TOPK_SOURCES=(topk.cu cub_topk.cu flashinfer_topk_binding.cu
  flashinfer_fast_topk_clusters_binding.cu)

rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 -m pip download -q --no-deps "${PLATFORM[@]}" -d "$OUTDIR" "${WHEELS[@]}"
python3 -m pip download -q --no-deps "${PLATFORM[@]}" -d "$tmp" "$FLASHINFER"

# 1. Extract the trimmed package into $tmp/tree.
python3 - "$tmp"/flashinfer_python-*.whl "$tmp/tree" \
    "${SAMPLING_SOURCES[@]}" "${TOPK_SOURCES[@]}" <<'EOF'
import pathlib, sys, zipfile

src_wheel, tree = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
module_sources = set(sys.argv[3:])

def keep(name: str) -> bool:
    if name.endswith("/"):
        return False
    if name.split("/")[0].endswith(".dist-info"):
        return name.rsplit("/", 1)[1] in ("METADATA", "WHEEL", "top_level.txt")
    if not name.startswith("flashinfer/"):
        return False
    parts = pathlib.PurePosixPath(name).parts[1:]
    if len(parts) == 1:                        # flashinfer/*.py
        return parts[0].endswith(".py")
    if parts[0] in ("jit", "trace"):
        return parts[-1].endswith(".py")
    if parts[0] != "data":
        return False
    if parts[1] in ("include", "spdlog"):
        return True
    if parts[1] == "cccl":
        return parts[2] in ("cub", "libcudacxx", "thrust")
    if parts[1] == "csrc" and len(parts) == 3:  # shared headers + module sources
        return not parts[2].endswith((".cu", ".jinja")) or parts[2] in module_sources
    return False

with zipfile.ZipFile(src_wheel) as z:
    z.extractall(tree, [n for n in z.namelist() if keep(n)])
(tree / "flashinfer" / "__init__.py").write_text(
    "# Trimmed for offline use: import submodules explicitly "
    "(e.g. flashinfer.sampling).\n"
    "from .version import __version__ as __version__\n")
EOF

# 2. Optionally compile the two modules ahead of time (flags as in the
#    build.ninja that FlashInfer 0.7.4 writes for FLASHINFER_CUDA_ARCH_LIST=9.0).
if [ "$AOT" = 1 ] && "$CUDA_HOME/bin/nvcc" --version 2>/dev/null | grep -q 'release 13\.'; then
  unzip -q "$OUTDIR"/apache_tvm_ffi-*.whl 'tvm_ffi/include/*' 'tvm_ffi/3rdparty/dlpack/*' -d "$tmp/ffi"
  data=$tmp/tree/flashinfer/data
  CUDA_FLAGS=(-D_GLIBCXX_USE_CXX11_ABI=1
    -I"$data/cccl/cub" -I"$data/cccl/libcudacxx/include" -I"$data/cccl/thrust"
    -isystem "$CUDA_HOME/include" -isystem "$tmp/ffi/tvm_ffi/include"
    -isystem "$tmp/ffi/tvm_ffi/3rdparty/dlpack/include"
    -isystem "$data/include" -isystem "$data/csrc"
    --compiler-options=-fPIC --expt-relaxed-constexpr
    -static-global-template-stub=false -gencode=arch=compute_90a,code=sm_90a
    -DFLASHINFER_ENABLE_FP8_E8M0 -DFLASHINFER_ENABLE_FP4_E2M1 -std=c++17
    --threads=1 -use_fast_math -Xfatbin=-compress-all --compress-mode=size
    -DFLASHINFER_ENABLE_F16 -DFLASHINFER_ENABLE_BF16 -DFLASHINFER_ENABLE_FP8_E4M3
    -DFLASHINFER_ENABLE_FP8_E5M2 -DNDEBUG -O3)
  build_module() {  # name extra_flag sources...
    local name=$1 extra=$2; shift 2
    local dir=$tmp/obj/$name objs=() pids=() src pid
    mkdir -p "$dir" "$data/aot/$name"
    for src in "$@"; do
      "$CUDA_HOME/bin/nvcc" "${CUDA_FLAGS[@]}" $extra -c "$data/csrc/$src" \
          -o "$dir/${src%.cu}.o" &
      pids+=($!)
      objs+=("$dir/${src%.cu}.o")
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
    c++ "${objs[@]}" -shared -L"$CUDA_HOME/lib64" -L"$CUDA_HOME/lib64/stubs" \
        -lcudart -lcuda -o "$data/aot/$name/$name.so"
  }
  build_module sampling "" "${SAMPLING_SOURCES[@]}"
  build_module topk -lineinfo "${TOPK_SOURCES[@]}"
else
  echo "no AOT build (AOT=$AOT, nvcc 13 not found?): FlashInfer JIT-compiles on first use" >&2
fi

# 3. Zip the tree back into a wheel with a fresh RECORD.
python3 - "$tmp/tree" "$OUTDIR" "$(basename "$tmp"/flashinfer_python-*.whl)" <<'EOF'
import base64, hashlib, pathlib, sys, zipfile

tree, outdir, wheel_name = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), sys.argv[3]
dist_info = next(p.name for p in tree.iterdir() if p.name.endswith(".dist-info"))
record = []
with zipfile.ZipFile(outdir / wheel_name, "w", zipfile.ZIP_DEFLATED) as z:
    for path in sorted(p for p in tree.rglob("*") if p.is_file()):
        name, data = path.relative_to(tree).as_posix(), path.read_bytes()
        z.writestr(name, data)
        h = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={h},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    z.writestr(f"{dist_info}/RECORD", "\n".join(record) + "\n")
EOF

du -sh "$OUTDIR"/*.whl
du -sh "$OUTDIR"
