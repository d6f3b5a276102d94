"""pi 1.6's ``pi.exec`` ``maxBuffer``: ``ctx.exec(..., max_buffer=N)`` stops a command once
stdout and stderr together pass N bytes, keeps what came up to the limit, and says so
with ``truncated``, ``killed`` and a shell's code for the kill."""

import sys

import pytest

from support.agents import run
from support.harnesses import make

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="runs sh")


def test_a_command_past_max_buffer_is_stopped_with_its_output_up_to_the_limit(tmp_path):
    harness, *_ = make(tmp_path, [])
    done = run(harness.ctx.exec("printf 'abcdefgh'; printf 'ijkl' >&2; sleep 5; echo never", max_buffer=10))
    assert len(done.stdout) + len(done.stderr) == 10 and done.stdout.startswith("abcdefgh")
    assert (done.truncated, done.killed, done.code) == (True, True, 137)
    assert "never" not in done.stdout


def test_a_command_within_max_buffer_is_neither_truncated_nor_killed(tmp_path):
    harness, *_ = make(tmp_path, [])
    done = run(harness.ctx.exec("printf 'abcdefgh'; exit 3", max_buffer=8))
    assert (done.stdout, done.truncated, done.killed, done.code) == ("abcdefgh", False, False, 3)
