import pytest

from support.rpc import rpc_starter


@pytest.fixture
def start_rpc(pi):
    """Start ``pi --mode rpc`` as a subprocess (extra flags as arguments); every client
    is ended after the test."""
    with rpc_starter(pi.popen) as start:
        yield start


@pytest.fixture
def rpc(start_rpc):
    return start_rpc()
