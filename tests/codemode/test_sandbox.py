"""The sandbox: a script runs as an async function body in QuickJS, with no file, network,
timer or module access, under a wall-time deadline and a memory limit, in a worker the
harness can stop (an endless loop, an abort) while the session goes on."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest
from support.codemode_scripts import echo, output_of, results, script_calls

import pi_plugins.codemode as codemode
from pi_core import ToolResultMessage
from pi_core.testing.harness import HarnessMaker

pytestmark = pytest.mark.process


def test_top_level_await_and_return_work(tmp_path):
    (text,) = results(tmp_path, "const word = await tools.echo({word: 'hi'});\nreturn word + '!'")
    assert text.startswith("Script completed\nWall time ")
    assert output_of(text) == "Output:\n\necho hi!"


def test_a_script_finds_no_file_module_timer_or_network_globals(tmp_path):
    probe = ("return ['require', 'process', 'std', 'os', 'fetch', 'XMLHttpRequest', 'WebSocket', 'setTimeout',"
             " 'setInterval', 'Deno', 'Bun'].map((name) => name + ':' + typeof globalThis[name]).join(' ')")
    (text,) = results(tmp_path, probe)
    assert all(part.endswith(":undefined") for part in output_of(text).split("\n")[-1].split(" "))


def test_a_script_cannot_read_a_file(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT")
    attempts = [
        f"const fs = await import('fs'); return fs.readFileSync({str(secret)!r}, 'utf8')",
        f"const std = await import('qjs:std'); return std.loadFile({str(secret)!r})",
        f"const std = await import('std'); return std.loadFile({str(secret)!r})",
        f"return require('fs').readFileSync({str(secret)!r}, 'utf8')",
    ]
    texts = results(tmp_path, *attempts)
    for text in texts:
        assert text.startswith("Script failed")
        assert "TOP-SECRET-CONTENT" not in text


def test_a_script_cannot_open_a_socket(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    connections = []
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                connections.append(listener.accept())
            except OSError:
                pass

    watcher = threading.Thread(target=accept, daemon=True)
    watcher.start()
    url = f"http://127.0.0.1:{port}/"
    texts = results(tmp_path, f"return await fetch({url!r})", f"return new WebSocket({url!r})",
                    f"const os = await import('qjs:os'); return os.exec(['curl', {url!r}])",
                    f"const x = new XMLHttpRequest(); x.open('GET', {url!r}); x.send()")
    stop.set()
    watcher.join()
    listener.close()
    assert all(text.startswith("Script failed") for text in texts)
    assert connections == []


def test_an_endless_loop_stops_at_timeout_ms_and_the_session_goes_on(tmp_path):
    began = time.monotonic()
    looped, after = results(tmp_path, '// @options: {"timeout_ms": 500}\ntext("spinning"); while (true) {}',
                            "return await tools.echo({word: 'still here'})")
    assert time.monotonic() - began < 10
    assert looped.startswith("Script failed")
    assert output_of(looped) == ("Output:\n\nspinning\nScript error:\nScript timed out: Execution timed out "
                                 "after 500 ms\n\nNo tool calls were made.")
    assert output_of(after) == "Output:\n\necho still here"


def test_a_script_that_runs_out_of_memory_fails_and_the_next_one_runs(tmp_path):
    hungry, after = results(tmp_path, "const all = []; while (true) all.push('x'.repeat(1 << 20) + all.length)",
                            "return 1 + 1")
    assert hungry.startswith("Script failed") and "out of memory" in hungry
    assert output_of(after) == "Output:\n\n2"


def test_abort_stops_a_running_script_at_once(tmp_path):
    async def scenario():
        make = HarnessMaker(tmp_path)
        harness = await make(codemode, script=script_calls("while (true) {}"), tools=[echo, codemode.TOOL])
        harness.agent.set_active_tools(["echo", "codemode"])
        started = asyncio.Event()
        harness.subscribe(lambda event: started.set() if event.type == "tool_execution_start" else None)
        prompt = asyncio.ensure_future(harness.prompt("go"))
        await asyncio.wait_for(started.wait(), 30)
        await asyncio.sleep(0.3)
        began = time.monotonic()
        harness.abort()
        messages = await asyncio.wait_for(prompt, 10)
        return time.monotonic() - began, [m for m in messages if isinstance(m, ToolResultMessage)]

    took, (result,) = asyncio.run(scenario())
    assert took < 3
    assert result.is_error


def test_a_promise_that_can_never_settle_fails_at_once(tmp_path):
    began = time.monotonic()
    (text,) = results(tmp_path, "await new Promise(() => {})")
    assert time.monotonic() - began < 10
    assert text.startswith("Script failed") and "can never settle" in text


def test_a_syntax_error_fails_before_anything_runs(tmp_path):
    (text,) = results(tmp_path, "text('x'); return (")
    assert text.startswith("Script failed")
    assert "SyntaxError" in text and "codemode.js:" in text and "\nx\n" not in text


def test_a_reply_keeps_going_when_the_worker_is_reused(tmp_path):
    texts = results(tmp_path, *(f"store('n{i}', {i}); return load('n{i}')" for i in range(4)))
    assert [output_of(t) for t in texts] == [f"Output:\n\n{i}" for i in range(4)]
