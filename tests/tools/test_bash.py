"""bash: streamed output, exit codes, budgets with the full output kept in a temp file,
and no process left behind after a timeout, an abort or a cancellation."""

import asyncio
import time
from pathlib import Path

from support.gates import Gate
from support.tool_helpers import Updates, call, invoke, text_of, wait_dead
from pi_core.protocol.signal import AbortSignal


def pids_in(path: Path) -> list[int]:
    return [int(p) for p in path.read_text().split()]


def test_returns_stdout_and_stderr(ws):
    result = call("bash", {"command": "echo out; echo err >&2"}, ws)
    assert not result.is_error
    assert sorted(text_of(result).split()) == ["err", "out"]
    assert result.details is None


def test_runs_in_the_working_directory(ws):
    assert text_of(call("bash", {"command": "pwd"}, ws)).strip() == str(ws)


def test_no_output_says_so(ws):
    assert text_of(call("bash", {"command": "true"}, ws)) == "(no output)"


def test_non_zero_exit_is_an_error_with_the_code(ws):
    result = call("bash", {"command": "echo failing >&2; exit 3"}, ws)
    assert result.is_error
    assert text_of(result) == "failing\n\n\nCommand exited with code 3"  # as pi words it


def test_death_by_signal_is_an_error_naming_it(ws):
    result = call("bash", {"command": "kill -SEGV $$"}, ws)
    assert result.is_error and "SIGSEGV" in text_of(result)


def test_output_streams_as_updates_before_the_command_ends(ws):
    gate = Gate(ws.parent / "gate")  # "two" is written only once "one" came as an update
    updates = Updates(lambda u: text_of(u).strip() == "one" and gate.open())
    try:
        result = call("bash", {"command": "echo one; " + gate.holds("echo two")}, ws, updates=updates)
    finally:
        gate.close()
    texts = [text_of(u) for u in updates]
    assert any(t.strip() == "one" for t in texts), texts
    assert text_of(result) == "one\ntwo\n"


def test_output_beyond_the_budget_keeps_the_tail_and_the_temp_file_keeps_everything(ws):
    result = call("bash", {"command": "seq 1 100000"}, ws)
    text = text_of(result)
    body, notice = text.rsplit("\n\n", 1)
    assert len(body.encode()) <= 50 * 1024 and body.endswith("99999\n100000\n")
    assert "\n1\n" not in body and body.split("\n")[0] != "1"
    path = result.details["fullOutputPath"]
    assert path in notice and "read" in notice
    full = Path(path).read_text()
    assert full == "".join(f"{i}\n" for i in range(1, 100001))
    truncation = result.details["truncation"]
    assert truncation["totalLines"] == 100001 and truncation["truncated"]
    Path(path).unlink()


def test_a_line_budget_overflow_also_saves_the_full_output(ws):
    result = call("bash", {"command": "seq 1 3000"}, ws)  # 3,001 lines but only 14 KB
    text = text_of(result)
    assert text.startswith("1002\n") and "lines 1002-3001 of 3001" in text
    path = Path(result.details["fullOutputPath"])
    assert path.read_text().splitlines() == [str(i) for i in range(1, 3001)]
    path.unlink()


def test_one_huge_line_shows_its_end(ws):
    result = call("bash", {"command": "head -c 200000 /dev/zero | tr '\\0' a; echo -n END"}, ws)
    text = text_of(result)
    assert "aEND" in text and "of line 1" in text
    Path(result.details["fullOutputPath"]).unlink()


def test_timeout_kills_the_command_and_every_child_it_left(ws):
    pids = ws / "pids"
    command = (
        f"sleep 300 & echo $! >> {pids}; "
        f"(sleep 300 & echo $! >> {pids}; wait) & echo $! >> {pids}; "
        f"setsid sleep 300 & echo $! >> {pids}; "  # left the process group on purpose
        f"echo $$ >> {pids}; echo started; sleep 300"
    )
    began = time.monotonic()
    result = call("bash", {"command": command, "timeout": 1}, ws)
    assert time.monotonic() - began < 5
    assert result.is_error
    assert "started" in text_of(result) and "timed out after 1 seconds" in text_of(result)
    spawned = pids_in(pids)
    assert len(spawned) == 5
    assert wait_dead(spawned) == []


def test_cancelling_the_tool_kills_the_process_group(ws):
    pids = ws / "pids"

    async def scenario():
        task = asyncio.ensure_future(invoke("bash", {"command": f"sleep 300 & echo $! > {pids}; echo $$ >> {pids}; sleep 300"}, ws))
        while not pids.exists() or len(pids.read_text().split()) < 2:
            await asyncio.sleep(0.02)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            return True
        return False

    assert asyncio.run(scenario())
    assert wait_dead(pids_in(pids)) == []


def test_abort_signal_stops_the_command_with_an_error(ws):
    pids = ws / "pids"
    signal = AbortSignal()

    async def scenario():  # aborted once "working" came out (its pid was written first)
        updates = Updates(lambda u: "working" in text_of(u) and signal.abort())
        return await invoke("bash", {"command": f"echo $$ > {pids}; echo working; sleep 300"}, ws,
                            signal=signal, updates=updates)

    result = asyncio.run(asyncio.wait_for(scenario(), 10))
    assert result.is_error and text_of(result).endswith("Command aborted")
    assert "working" in text_of(result)
    assert wait_dead(pids_in(pids)) == []


def test_a_background_job_does_not_hold_the_result_back(ws):
    pids = ws / "pids"
    began = time.monotonic()
    result = call("bash", {"command": f"sleep 30 & echo $! > {pids}; echo done"}, ws)
    assert time.monotonic() - began < 15  # not the job's 30 s (a loaded machine takes seconds)
    assert text_of(result) == "done\n"
    import os
    import signal as signals

    os.kill(pids_in(pids)[0], signals.SIGKILL)  # clean up: it was meant to outlive the call


def test_missing_working_directory_is_an_error(tmp_path):
    result = call("bash", {"command": "true"}, tmp_path / "gone")
    assert result.is_error and "does not exist" in text_of(result)
