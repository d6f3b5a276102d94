"""The test suite's own machinery: the process guard, the gates, the emulated terminal's
keys, and replies held by the scripted server."""

import socket
import subprocess
import sys
import threading

import pytest

from support.gates import Gate
from support.llm_server import LlmServer, Reply
from support.process_guard import forbid_slow_programs, slow_program
from support.screen import key_bytes


@pytest.mark.parametrize("args, found", [
    ([sys.executable, "-c", "pass"], sys.executable),
    (["/usr/bin/node", "x.mjs"], "/usr/bin/node"),
    (["tmux", "-S", "sock", "kill-server"], "tmux"),
    (["bash", "-c", 'exec "$0"', "/usr/bin/chromium"], "/usr/bin/chromium"),
    ("python3 -m pip install x", "python3 -m pip install x"),
    (["/usr/bin/bash", "-c", "echo python"], None),
    (["/usr/bin/rg", "--json", "pattern"], None),
])
def test_slow_programs_are_told_apart_from_what_the_tools_start(args, found):
    assert slow_program(args) == found


def test_an_unmarked_test_that_starts_an_interpreter_fails_and_says_how_to_mark_it(monkeypatch):
    forbid_slow_programs(monkeypatch)
    with pytest.raises(pytest.fail.Exception, match="mark it @pytest.mark.process"):
        subprocess.run([sys.executable, "-c", "pass"])
    assert subprocess.run(["bash", "-c", "exit 3"]).returncode == 3  # the tools' own may run


def test_a_gate_holds_a_command_until_opened_and_hears_one_start(tmp_path):
    gate, started = Gate(tmp_path / "gate"), Gate(tmp_path / "started")
    command = started.tells(gate.holds("echo through"))
    process = subprocess.Popen(["bash", "-c", command], stdout=subprocess.PIPE, text=True)
    try:
        started.wait()
        with pytest.raises(subprocess.TimeoutExpired):
            process.wait(0.2)  # held at the gate
        gate.open()
        assert process.communicate(timeout=10)[0] == "through\n"
    finally:
        gate.close()
        started.close()


def test_waiting_for_a_command_that_never_starts_fails(tmp_path):
    with pytest.raises(AssertionError, match="did not start"):
        Gate(tmp_path / "started").wait(timeout=0.1)


@pytest.mark.parametrize("name, sent", [("Enter", "\r"), ("C-c", "\x03"), ("C-j", "\n"),
                                        ("M-k", "\x1bk"), ("Down", "\x1b[B"), ("M-Enter", "\x1b\r")])
def test_key_names_become_the_bytes_a_terminal_sends(name, sent):
    assert key_bytes(name) == sent


def test_an_unknown_key_name_is_refused():
    with pytest.raises(ValueError, match="no bytes known"):
        key_bytes("Hyper-x")


def test_a_held_reply_streams_its_start_then_waits_for_its_event():
    streaming = threading.Event()
    with LlmServer() as server:
        server.push(Reply(text="one two three", delta_size=4, hold=streaming, hold_after=2))
        host, port = server.url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=10) as connection:
            body = b'{"model": "m"}'
            connection.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                               b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
            received = b""
            while b'"content": "one "' not in received:
                received += connection.recv(65536)
            connection.settimeout(0.3)
            with pytest.raises(socket.timeout):
                connection.recv(65536)  # held after the role and the first delta
            assert b"two" not in received
            streaming.set()
            connection.settimeout(10)
            while b"[DONE]" not in received:
                received += connection.recv(65536)
        assert b'"content": "two "' in received
