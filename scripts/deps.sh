#!/usr/bin/env bash
# Installs the build dependencies on Debian (root or sudo) when they are missing.
set -euo pipefail
pkgs=(build-essential clang cmake ninja-build libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev
      nlohmann-json3-dev libsimdjson-dev libpcre2-dev libutf8proc-dev zlib1g-dev
      python3-venv python3-pip xz-utils)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
fi
