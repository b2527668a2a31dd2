#!/usr/bin/env bash
# The Python package (python/lumos over lumos._core): builds it with pip (scikit-build-core runs
# CMake into build/python-*, incrementally: a user's `pip install .` builds in a temporary folder) into the virtual environment build/pyenv, then runs
# tests/python with pytest against build/lumos. Its build tools and pandas, matplotlib and pytest
# come from PyPI. Where PyPI cannot be reached (or no venv can be made) the run fails, so that CI
# never passes without the Python suite; a developer's machine without PyPI asks for the skip with
# LUMOS_SKIP_PYTHON_TESTS=1, and the script then says why it skipped. PYTHON=... picks the
# interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
# Cannot run the suite: a failure, unless the skip was asked for.
cannot_run() {
  if [[ "${LUMOS_SKIP_PYTHON_TESTS:-0}" == 1 ]]; then
    echo "python-test: SKIPPED (LUMOS_SKIP_PYTHON_TESTS=1): $1" >&2
    exit 0
  fi
  echo "python-test: FAILED: $1 (set LUMOS_SKIP_PYTHON_TESTS=1 to skip on purpose)" >&2
  exit 1
}
python=${PYTHON:-python3}
want=$("$python" -c 'import sys; print(sys.version)')
if [[ -x build/pyenv/bin/python ]] &&
   [[ "$(build/pyenv/bin/python -c 'import sys; print(sys.version)')" != "$want" ]]; then
  rm -rf build/pyenv  # made by another interpreter
fi
if [[ ! -x build/pyenv/bin/python ]] && ! "$python" -m venv build/pyenv 2>/dev/null; then
  rm -rf build/pyenv
  echo "python-test: $python has no venv module; installing python3-venv" >&2
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo -n"
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
         python3-venv >/dev/null && "$python" -m venv build/pyenv; }; then
    cannot_run "no virtual environment can be made for $python"
  fi
fi
pip=(build/pyenv/bin/pip --disable-pip-version-check -q)
probe=$(mktemp -d)
if ! "${pip[@]}" download --no-deps --retries 2 --timeout 20 -d "$probe" "pytest>=7" >/dev/null 2>&1
then
  rm -rf "$probe"
  cannot_run "PyPI cannot be reached for the package's build tools and dependencies"
fi
rm -rf "$probe"
"${pip[@]}" install "scikit-build-core>=0.10" "pybind11>=2.10" "pandas>=1.5" "matplotlib>=3.5" \
  "pytest>=7"
"${pip[@]}" install --no-build-isolation --config-settings=build-dir="build/python-{wheel_tag}" .
LUMOS_BINARY="$PWD/build/lumos" build/pyenv/bin/python -m pytest -q tests/python
