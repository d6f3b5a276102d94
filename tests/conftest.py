"""Root of the test suite: pi's recorded fixtures, and programs some tests need.

``@pytest.mark.requires("tmux")`` (the test kit's mark, :mod:`pi_core.testing.programs`)
names programs a test needs: it skips where one is absent and fails under CI, which
installs them all. ``"pi"`` and ``"pi-acp"`` are the real pi and pi-acp (node and their
npm packages, see ``support.programs``).

``@pytest.mark.process`` marks a test that starts a real interpreter, node, tmux, a
browser or pip; ``pytest -m "not process"`` is the quick inner loop. A test without the
mark that starts one fails (``support.process_guard``).
"""

from __future__ import annotations

import os
import signal
import threading

import pytest

# Every Ray a test starts is this machine's alone (node address 127.0.0.1, loopback
# listeners): Ray reads its local-only switch when it is imported, so it is set first.
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")

from support.cli import PiRunner
from support.fixtures import FIXTURES
from support.llm_server import LlmServer
from support.process_guard import forbid_slow_programs
import support.programs  # noqa: F401  (registers the requirements "pi" and "pi-acp")
from support.wheels import sample_venv as make_sample_venv


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "process: slow tests that start real processes; `-m 'not process'` leaves them out")


@pytest.fixture(autouse=True)
def _process_marker_is_honest(request, monkeypatch):
    if request.node.get_closest_marker("process") is None:
        forbid_slow_programs(monkeypatch)


@pytest.fixture(autouse=True)
def _ctrl_c_as_python_sets_it():
    """Every test starts with Python's own Ctrl+C handling, so the processes it starts
    do too: a test run started as a shell's background job has SIGINT ignored, every
    child inherits that, and a ``pi batch`` started so rightly ignores Ctrl+C (as Python
    itself does), which a test that sends it SIGINT would take for a hang."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session", autouse=True)
def _own_cache_folder(tmp_path_factory):
    """pi's cache folder (the help text, sessions' offset indexes) is the test run's own,
    never the user's ``~/.cache``."""
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))


@pytest.fixture(scope="session")
def sample_venv(tmp_path_factory):
    """The python of a venv holding the sample plugin wheels (``support.wheels.SAMPLES``),
    built and installed once per run. Only ``process`` tests use it."""
    return make_sample_venv(tmp_path_factory.mktemp("sample-plugins"))


@pytest.fixture(scope="session")
def pi_fixtures():
    """The folder of files recorded from the real pi 0.73.1 (``sessions/``, ``requests/``)."""
    return FIXTURES


@pytest.fixture
def server():
    """The scripted LLM server on 127.0.0.1 (``support.llm_server``)."""
    with LlmServer() as running:
        yield running


@pytest.fixture
def pi(tmp_path, server):
    """The real ``pi`` in a subprocess, with an agent dir whose models.json points at ``server``."""
    return PiRunner(tmp_path, server)
