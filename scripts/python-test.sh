#!/usr/bin/env bash
# The Python package (python/lumos over lumos._core): builds it with pip (scikit-build-core runs
# CMake into build/python-*, incrementally) into the virtual environment build/pyenv, then runs
# tests/python with pytest against build/lumos. Its build tools and pandas, matplotlib and pytest
# come from PyPI: where PyPI cannot be reached (or no venv can be made) the tests are skipped and
# the script says why; any other failure fails it. PYTHON=... picks the interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
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
    echo "python-test: SKIPPED: no virtual environment can be made for $python" >&2
    exit 0
  fi
fi
pip=(build/pyenv/bin/pip --disable-pip-version-check -q)
probe=$(mktemp -d)
if ! "${pip[@]}" download --no-deps --retries 2 --timeout 20 -d "$probe" "pytest>=7" >/dev/null 2>&1
then
  rm -rf "$probe"
  echo "python-test: SKIPPED: PyPI cannot be reached for the package's build tools and dependencies" >&2
  exit 0
fi
rm -rf "$probe"
"${pip[@]}" install "scikit-build-core>=0.8" "pybind11>=2.10" "pandas>=1.5" "matplotlib>=3.5" \
  "pytest>=7"
"${pip[@]}" install --no-build-isolation .
LUMOS_BINARY="$PWD/build/lumos" build/pyenv/bin/python -m pytest -q tests/python
