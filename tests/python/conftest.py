"""Shared fixtures: where the lumos command and the repository's examples are."""
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def lumos_binary():
    """The lumos command built beside the package (LUMOS_BINARY, else build/lumos)."""
    path = os.environ.get("LUMOS_BINARY", str(ROOT / "build" / "lumos"))
    if not os.path.exists(path):
        pytest.skip(f"the lumos command is not built at {path} (set LUMOS_BINARY)")
    return path


@pytest.fixture
def examples():
    return ROOT / "examples"
