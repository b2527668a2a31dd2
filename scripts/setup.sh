#!/usr/bin/env bash
# Installs what the build needs from Debian's packages (skipping what is already there).
# The CUDA toolkit is used when present (nvcc on PATH or in /usr/local/cuda) and optional. Ninja
# is for scripts/quickstart.sh (Make works too, slower on few cores).
set -euo pipefail
pkgs=(cmake g++ make ninja-build pkg-config libsimdjson-dev libcxxopts-dev libdeflate-dev
      libgtest-dev libbenchmark-dev zlib1g-dev gzip libtomlplusplus-dev clang-format libopenmpi-dev openmpi-bin)
[[ "${LUMOS_WITH_FUZZER:-0}" == 1 ]] && pkgs+=(clang libclang-rt-14-dev)
# Headless Chromium opens `lumos report`'s page in its test (Report.* in cli_tests); without it the
# test skips outside CI and fails in CI.
[[ "${LUMOS_WITH_CHROMIUM:-0}" == 1 ]] && pkgs+=(chromium)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
