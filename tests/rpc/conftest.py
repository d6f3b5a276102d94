import pytest

from support.cli import use_environment
from support.gates import Gate
from support.rpc import InProcessPi, rpc_starter


@pytest.fixture
def start_rpc(pi, monkeypatch):
    """``pi --mode rpc`` in this process (see :class:`support.rpc.InProcessPi`), in the
    environment and folder a subprocess of ``pi`` would get."""
    use_environment(monkeypatch, pi.env, pi.cwd)
    with rpc_starter(lambda *args: InProcessPi(*pi.flags(*args))) as start:
        yield start


@pytest.fixture
def start_rpc_process(pi):
    """``pi --mode rpc`` as a real subprocess: for what only a process has (EOF of a real
    stdin, signals, a reader that goes away). Tests using it are ``process`` tests."""
    with rpc_starter(pi.popen) as start:
        yield start


@pytest.fixture
def rpc(start_rpc):
    return start_rpc()


@pytest.fixture
def rpc_process(start_rpc_process):
    return start_rpc_process()


@pytest.fixture
def gate(pi):
    """A :class:`support.gates.Gate` in the project folder (for the tools' commands)."""
    opened = Gate(pi.cwd / "gate")
    yield opened
    opened.close()
