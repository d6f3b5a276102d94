import pytest

from support.rpc import RpcClient


@pytest.fixture
def start_rpc(pi):
    """Start ``pi --mode rpc`` (extra flags as arguments); every client is ended after
    the test, and a test may close one itself to look at the exit."""
    clients = []

    def start(*flags: str) -> RpcClient:
        client = RpcClient(pi.popen("--mode", "rpc", *flags))
        clients.append(client)
        return client

    yield start
    for client in clients:
        try:
            client.close(timeout=10)
        finally:
            client.kill()


@pytest.fixture
def rpc(start_rpc):
    return start_rpc()
