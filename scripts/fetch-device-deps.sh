#!/usr/bin/env bash
# Downloads (here, where Debian's registry is reachable) the .deb files the build needs into
# .devdeps/ (git-ignored), so a lent GPU machine, which reaches no registry, can build lumos:
# carry .devdeps with the run and scripts/device-check.sh unpacks them into /tmp/devdeps.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .devdeps
cd .devdeps
apt-get -qq update >/dev/null 2>&1 || true
apt-get download libsimdjson-dev libsimdjson14 libdeflate-dev libdeflate0 libcxxopts-dev libgtest-dev \
  googletest libbenchmark-dev libbenchmark1debian zlib1g-dev libtomlplusplus-dev libtomlplusplus3 \
  2>&1 | tail -n 2
ls -la
