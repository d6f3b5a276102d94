"""No command outlives its session, whatever it does to escape and however pi ends.

The escape forms (:mod:`support.escapes`): a background job, ``setsid``, ``env -i
setsid`` (no environment marker left to find it by), a double fork, and a sleep; found
afterwards by a number in their command lines. Where the machine lets pi make cgroups
(this one: root with cgroup v2) each command runs in one and pi's warden kills them all
when pi ends, SIGKILL included; elsewhere the fallback (parent-death signal, process
group, environment marker) catches all but ``env -i setsid``, and says so."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import subprocess
import sys
import time

import pytest

from pi_core.testing.programs import require
from pi_plugins.tools import cgroups, processes, warden
from support.agents import run
from support.escapes import (
    SLEEPS, escape_forms, fallback_command, kill_all, kill_points, left_after, new_mark,
    session_processes, sleeping, start_print_mode, start_serve,
)
from support.harnesses import make
from support.survivors import wait_for

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="scans /proc")


def cgroups_here() -> str:
    folder = cgroups.own_folder()
    require(folder is not None, "a cgroup v2 this process may create cgroups under")
    return folder


@pytest.fixture
def mark():
    value = new_mark()
    yield value
    kill_all(session_processes(value))  # a failed test leaves nothing either


@pytest.fixture
def fallback(monkeypatch):
    """This process as on a machine without writable cgroups: a warden of its own."""
    monkeypatch.setattr(cgroups, "own_folder", lambda: None)
    monkeypatch.setattr(warden, "_warden", None)
    yield
    if warden._warden is not None:
        warden._warden.stop()


def test_each_command_runs_in_a_cgroup_of_its_own_that_goes_when_it_ends(tmp_path):
    cgroups_here()
    harness, *_ = make(tmp_path, [])
    first = run(harness.ctx.exec("cat /proc/self/cgroup"))
    second = run(harness.ctx.exec("cat /proc/self/cgroup"))
    [one] = [line[3:] for line in first.stdout.splitlines() if line.startswith("0::")]
    [two] = [line[3:] for line in second.stdout.splitlines() if line.startswith("0::")]
    assert re.fullmatch(r".*/pi-\d+-[0-9a-f]+/command-[0-9a-f]+", one) and one != two
    guard = warden.warden(processes.MARKER)
    assert guard.folder is not None and guard.folder.endswith(os.path.dirname(one))
    assert not os.path.exists(os.path.join(guard.folder, os.path.basename(one)))  # removed once it ended


@pytest.mark.process
def test_a_timeout_reaches_every_escape_form(tmp_path, mark):
    harness, *_ = make(tmp_path, [])
    started = time.monotonic()
    done = run(harness.ctx.exec(escape_forms(mark), timeout=1))
    assert done.killed and done.stdout == "started\n" and time.monotonic() - started < 5
    assert left_after(mark, grace=1) == {}


@pytest.mark.process
def test_an_abort_reaches_every_escape_form(tmp_path, mark):
    harness, *_ = make(tmp_path, [])

    async def scenario():
        task = asyncio.ensure_future(harness.run_bash(escape_forms(mark)))
        while sleeping(mark) < SLEEPS:
            await asyncio.sleep(0.02)
        harness.abort_bash()
        return await asyncio.wait_for(task, 5)

    assert run(scenario()).cancelled
    assert left_after(mark, grace=1) == {}


def wait_for_escapes(mark: int, process: subprocess.Popen) -> None:
    wait_for(lambda: sleeping(mark) == SLEEPS or process.poll() is not None, timeout=30,
             what="every escape form to run")
    assert process.poll() is None, "pi ended before its command ran"


@pytest.mark.process
def test_sigkill_of_print_mode_mid_command_leaves_no_process_of_the_session(pi, server, mark):
    process = start_print_mode(pi, server, mark)
    wait_for_escapes(mark, process)
    folder = cgroups.own_folder()
    process.kill()
    process.wait()
    assert left_after(mark) == {}  # the commands, and pi's warden with them
    if folder is not None:  # its cgroups are removed too
        assert not [name for name in os.listdir(folder) if name.startswith(f"pi-{process.pid}-")]


@pytest.mark.process
def test_sigkill_of_serve_mid_command_leaves_no_process_of_the_session(pi, server, mark):
    with contextlib.ExitStack() as stack:
        served = start_serve(pi, server, mark, stack)
        wait_for_escapes(mark, served)
        served.kill()
        served.wait()
    assert left_after(mark) == {}


@pytest.mark.process
@pytest.mark.parametrize(("mode", "count"), [("print", 15), ("serve", 5), ("chat", 5)])
def test_sigkill_of_pi_at_random_points_leaves_no_process_of_the_session(pi, server, mode, count):
    points = kill_points(pi, server, count, seed=41, mode=mode)
    assert [p["left"] for p in points if p["left"]] == []
    assert any(p["sleeps_at_kill"] == SLEEPS for p in points)  # some points fell mid-command


# ---------------------------------------------------------------- without cgroups


@pytest.mark.process
def test_without_cgroups_a_timeout_reaches_every_form_that_keeps_its_environment(tmp_path, mark, fallback):
    harness, *_ = make(tmp_path, [])
    command = escape_forms(mark).replace("env -i setsid", "setsid")
    done = run(harness.ctx.exec(command, timeout=1))
    assert done.killed and warden._warden is not None and warden._warden.folder is None
    assert left_after(mark, grace=1) == {}


@pytest.mark.process
def test_without_cgroups_sigkill_of_pi_leaves_only_what_env_i_setsid_hid(pi, server, mark):
    process = start_print_mode(pi, server, mark, command=fallback_command(pi, "-p", "run it"))
    wait_for_escapes(mark, process)
    process.kill()
    process.wait()
    # the parent-death signal ends the shell, the warden the group and every process
    # with pi's marker; a process with no environment, outside the group, is not found
    assert sorted(left_after(mark, grace=3).values()) == [f"sleep 600.{mark}3"]
