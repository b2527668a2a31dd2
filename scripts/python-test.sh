#!/usr/bin/env bash
# The Python package (python/lumos over lumos._core): builds it with pip (scikit-build-core runs
# CMake into build/python-*, incrementally) into the virtual environment build/pyenv, then runs
# tests/python with pytest against build/lumos. Its build tools and pandas, matplotlib and pytest
# come from PyPI; where PyPI cannot be reached the tests are skipped and the script says so.
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
if [[ ! -x build/pyenv/bin/python ]]; then
  if ! "$python" -m venv build/pyenv 2>/dev/null; then
    echo "python-test: $python has no venv module; installing python3-venv" >&2
    SUDO=""
    [[ $(id -u) -ne 0 ]] && SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
    rm -rf build/pyenv
    python3 -m venv build/pyenv
  fi
fi
pip=(build/pyenv/bin/pip --disable-pip-version-check -q)
if ! "${pip[@]}" install "scikit-build-core>=0.8" "pybind11>=2.10" "pandas>=1.5" \
    "matplotlib>=3.5" "pytest>=7"; then
  echo "python-test: SKIPPED: the package's dependencies could not be installed from PyPI" >&2
  exit 0
fi
"${pip[@]}" install --no-build-isolation .
LUMOS_BINARY="$PWD/build/lumos" build/pyenv/bin/python -m pytest -q tests/python
