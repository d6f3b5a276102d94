"""One process runner: the bash tool, the user's ``!cmd`` and ``ctx.exec`` run through
the execution environment with one kill policy, one bounded output buffer and one
truncation rule."""

import asyncio
import os
import sys
import time
import uuid

import pytest

from pi_plugins.tools import processes

from support.agents import run
from support.harnesses import make
from support.tool_helpers import invoke

from support.survivors import escape_tree, marked, wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="scans /proc")


def test_ctx_exec_keeps_stdout_and_stderr_apart_and_bounds_them(tmp_path):
    harness, *_ = make(tmp_path, [])
    done = run(harness.ctx.exec("echo out; echo err >&2; exit 4"))
    assert (done.stdout, done.stderr, done.code, done.killed) == ("out\n", "err\n", 4, False)
    listed = run(harness.ctx.exec(["printf", "%s", "as argv"]))
    assert listed.stdout == "as argv" and listed.code == 0
    big = run(harness.ctx.exec("seq 1 100000"))
    assert big.truncated and big.stdout.endswith("100000\n") and len(big.stdout.split("\n")) == 2000
    with open(big.full_output_path) as full:
        assert sum(1 for _ in full) == 100000


@pytest.mark.process
def test_ctx_exec_on_timeout_kills_the_escape_tree(tmp_path):
    mark = uuid.uuid4().hex
    harness, *_ = make(tmp_path, [])
    started = time.monotonic()
    done = run(harness.ctx.exec(escape_tree(mark), timeout=1))
    assert done.killed and done.code is None and done.stdout == "started\n"
    assert time.monotonic() - started < 5
    assert marked(mark) == []


@pytest.mark.process
def test_an_aborted_user_command_leaves_nothing_of_what_left_its_group(tmp_path):
    mark = uuid.uuid4().hex
    harness, *_ = make(tmp_path, [])

    async def scenario():
        task = asyncio.ensure_future(harness.run_bash(
            f"export ESCAPE_MARK={mark}; setsid sleep 46 >/dev/null 2>&1 & sleep 47"))
        while len(marked(mark)) < 2:
            await asyncio.sleep(0.02)
        harness.abort_bash()
        return await asyncio.wait_for(task, 5)

    message = run(scenario())
    assert message.cancelled and message.exit_code is None
    assert marked(mark) == []


def test_the_bash_tool_and_the_users_command_cut_output_by_the_same_rule(tmp_path):
    harness, *_ = make(tmp_path, [])
    user = run(harness.run_bash("seq 1 3000"))
    tool = run(invoke("bash", {"command": "seq 1 3000"}, tmp_path))
    assert user.truncated and tool.details["truncation"]["truncated"]
    assert tool.content[0].text.startswith(user.output)  # then the tool's notice for the model


@pytest.mark.process
def test_a_background_job_of_a_finished_command_is_stopped_when_its_session_ends(tmp_path):
    mark = uuid.uuid4().hex
    harness, *_ = make(tmp_path, [])
    message = run(harness.run_bash(f"export ESCAPE_MARK={mark}; sleep 30 & echo started"))
    assert message.output == "started\n" and message.exit_code == 0
    assert marked(mark) == ["sleep 30"]
    assert [c.owner for c in processes.running(harness.ctx)] == [harness.ctx]
    run(harness.close())  # session_shutdown
    wait_for(lambda: marked(mark) == [], what="the job to be stopped")
    assert processes.running(harness.ctx) == []


@pytest.mark.process
def test_a_background_job_that_prints_after_its_call_returned_lives_on_until_the_session_ends(tmp_path):
    mark = uuid.uuid4().hex
    harness, *_ = make(tmp_path, [])

    # one process (it carries the marker all along) that starts printing once the call
    # has returned, and goes on printing
    printer = ("import time; time.sleep(0.3); "
               "[print('tick', flush=True) or time.sleep(0.05) for _ in iter(int, 1)]")

    async def scenario():
        message = await harness.run_bash(
            f"export ESCAPE_MARK={mark}; {sys.executable} -u -c \"{printer}\" & echo started")
        assert message.output == "started\n"
        await asyncio.sleep(1.0)  # it has printed into the pipe for a while by now
        alive = marked(mark)
        await harness.close()
        return alive

    alive = run(scenario())
    assert len(alive) == 1 and "-u -c" in alive[0], alive  # not killed by a closed pipe
    wait_for(lambda: marked(mark) == [], what="the job to be stopped")


def zombie_children() -> set[int]:
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == b"Z" and int(fields[1]) == os.getpid():
                found.add(int(name))
    return found


@pytest.mark.process
def test_orphans_that_come_back_to_pi_and_end_are_reaped_not_left_as_zombies(tmp_path):
    before = zombie_children()
    harness, *_ = make(tmp_path, [])
    for _ in range(3):
        message = run(harness.run_bash("(sleep 0.05 &); (true &); sleep 0.3; echo done"))
        assert message.output == "done\n"
    assert zombie_children() <= before
