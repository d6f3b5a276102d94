import pytest

from support.cli import use_environment
from support.gates import Gate
from support.rpc import InProcessPi, RpcClient


def _rpc_starter(launch):
    """``start(*flags)`` starts ``pi --mode rpc`` through ``launch``; every client is
    ended after the test (a test may close one itself to look at the exit)."""
    clients = []

    def start(*flags: str) -> RpcClient:
        client = RpcClient(launch("--mode", "rpc", *flags))
        clients.append(client)
        return client

    return start, clients


def _end(clients) -> None:
    for client in clients:
        try:
            client.close(timeout=10)
        finally:
            client.kill()


@pytest.fixture
def start_rpc(pi, monkeypatch):
    """``pi --mode rpc`` in this process (see :class:`support.rpc.InProcessPi`), in the
    environment and folder a subprocess of ``pi`` would get."""
    use_environment(monkeypatch, pi.env, pi.cwd)
    start, clients = _rpc_starter(lambda *args: InProcessPi(*pi.flags(*args)))
    yield start
    _end(clients)


@pytest.fixture
def start_rpc_process(pi):
    """``pi --mode rpc`` as a real subprocess: for what only a process has (EOF of a real
    stdin, signals, a reader that goes away). Tests using it are ``process`` tests."""
    start, clients = _rpc_starter(pi.popen)
    yield start
    _end(clients)


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
