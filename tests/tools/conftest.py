"""Fixtures for the coding-tool tests; the helpers are in support.tool_helpers."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest


@pytest.fixture
def shared_dir():
    """A directory anyone may enter (pytest's tmp_path is root-only), for tests that run
    part of their work as another user."""
    path = Path(tempfile.mkdtemp(prefix="pi-tools-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A working directory for the tools."""
    path = tmp_path / "ws"
    path.mkdir()
    return path
