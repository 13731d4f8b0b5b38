#!/usr/bin/env bash
# The Python package check (docs/python.md): builds the nextok wheel with
# scikit-build-core (extension + the components it links, warnings as
# errors), installs it into a fresh venv and runs tests/python_pkg there.
#
# The test dependencies (torch and transformers are several GB) live in
# build/pydeps, installed once per clone and reinstalled only when
# tests/python_pkg/requirements*.txt change (NEXTOK_PY_HF=0: without torch
# and transformers); the fresh venv sees them
# through a .pth file, after its own site-packages, so the nextok it
# imports is the wheel's. Prints the seconds each part took.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
t0=$SECONDS

deps=build/pydeps
reqs=(tests/python_pkg/requirements.txt)
hf=${NEXTOK_PY_HF:-1}  # 0: no torch/transformers (test_hf.py and the torch cases skip)
[ "$hf" = 0 ] || reqs+=(tests/python_pkg/requirements-hf.txt)
# vLLM and SGLang (test_vllm.py, test_sglang.py): pinned, installed with
# --no-deps since their own pins do not resolve on PyPI (the file says why).
engines=${NEXTOK_PY_ENGINES:-$hf}  # 0: without them (their tests skip); needs torch
nodeps=()
[ "$engines" = 0 ] || nodeps+=(tests/python_pkg/requirements-engines.txt)
if ! cat "${reqs[@]}" "${nodeps[@]}" | cmp -s - "$deps/requirements.txt"; then
  rm -rf "$deps"
  "$PY" -m venv "$deps"
  "$deps/bin/python" -m pip install -q "${reqs[@]/#/-r}"
  [ ${#nodeps[@]} = 0 ] || "$deps/bin/python" -m pip install -q --no-deps "${nodeps[@]/#/-r}"
  cat "${reqs[@]}" "${nodeps[@]}" >"$deps/requirements.txt"
fi
t1=$SECONDS

rm -rf build/wheel
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
# build/skbuild keeps the CMake tree between runs (pyproject.toml build-dir);
# without build isolation nanobind stays at one path, so reruns are incremental.
"$deps/bin/python" -m pip wheel . --no-deps --no-build-isolation -q -w build/wheel \
  -C cmake.define.NEXTOK_WERROR=ON
t2=$SECONDS

rm -rf build/pyvenv
"$PY" -m venv build/pyvenv
purelib() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
purelib "$deps/bin/python" >"$(purelib build/pyvenv/bin/python)/nextok-test-deps.pth"
build/pyvenv/bin/python -m pip install -q --no-deps --no-index build/wheel/nextok-*.whl
(cd build && pyvenv/bin/python -c 'import nextok, sys; assert "/build/pyvenv/" in nextok.__file__, nextok.__file__')
NEXTOK_REQUIRE_HF=$hf NEXTOK_REQUIRE_ENGINES=$engines build/pyvenv/bin/python -m pytest -q -p no:cacheprovider tests/python_pkg
t3=$SECONDS
echo "python_pkg: deps $((t1 - t0)) s, wheel $((t2 - t1)) s, venv + tests $((t3 - t2)) s, total $((t3 - t0)) s"
