#!/usr/bin/env bash
# One command on a fresh machine: install, build, and run every test (ctest, then the Python
# package's pytest suite through scripts/python-test.sh). Tests on real
# traces read ../shared/traces (override with LUMOS_TRACE_DIR=...); without it they skip and say so.
# --sanitize: the same suite built in build-asan/ with ASan + UBSan (scripts/build.sh --sanitize),
# the lumos command the cli tests run included; any sanitizer report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitize=0
case "${1:-}" in
  --sanitize) sanitize=1 ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--sanitize]" >&2; exit 2 ;;
esac
scripts/setup.sh
extra=()
[[ -n "${LUMOS_TRACE_DIR:-}" ]] && extra+=("-DLUMOS_TRACE_DIR=${LUMOS_TRACE_DIR}")
if ((!sanitize)); then
  scripts/build.sh "${extra[@]}"
  (cd build && ctest --output-on-failure -j "$(nproc)")
  scripts/python-test.sh
  exit
fi

scripts/build.sh --sanitize "${extra[@]}"
cd build-asan
# A report ends the process with exit code 99 (-fno-sanitize-recover=all makes every UBSan check
# fatal): ctest fails the test binary, and tests/support/test_util.hpp's run_lumos fails a test
# whose lumos subprocess exits 99 or prints a report, even where it expected a non-zero exit.
# Settings already in ASAN_OPTIONS / UBSAN_OPTIONS come last and win.
leaks=1
# LeakSanitizer needs ptrace; where it cannot run (some containers) it says so and dies.
probe=$(ASAN_OPTIONS=detect_leaks=1 ./lumos --help 2>&1 >/dev/null || true)
if [[ "$probe" == *"LeakSanitizer has encountered a fatal error"* ]]; then
  echo "sanitize: LeakSanitizer cannot run here (no ptrace); leak checks off" >&2
  leaks=0
fi
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:exitcode=99:detect_leaks=${leaks}:check_initialization_order=1:strict_init_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=0:exitcode=99:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
ctest --output-on-failure -j "$(nproc)"
