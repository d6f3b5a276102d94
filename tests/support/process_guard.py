"""Keeps the ``process`` marker honest: a test without it that starts a slow program (an
interpreter, node, tmux, a browser, pip) fails and names it, so ``pytest -m "not
process"`` stays the quick inner loop. What the tools themselves start (bash, rg) is
cheap and is what those tests are about, so it is allowed."""

from __future__ import annotations

import os
import subprocess

import pytest

#: Programs (by the start of their file name) only ``process`` tests may start.
SLOW_PROGRAMS = ("python", "node", "tmux", "chromium", "pip")


def slow_program(args) -> str | None:
    """The slow program among ``args`` (a Popen argument list or string), if any."""
    words = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
    for word in words:
        name = os.path.basename(os.fsdecode(word))
        if name.startswith(SLOW_PROGRAMS):
            return os.fsdecode(word)
    return None


def forbid_slow_programs(monkeypatch) -> None:
    """For the rest of the test, starting a slow program fails it."""
    original = subprocess.Popen.__init__

    def guarded(self, args, *rest, **kwargs):
        program = slow_program(args)
        if program is not None:
            pytest.fail(f"this test starts {program}: mark it @pytest.mark.process "
                        "(see tests/support/process_guard.py)", pytrace=False)
        original(self, args, *rest, **kwargs)

    monkeypatch.setattr(subprocess.Popen, "__init__", guarded)
