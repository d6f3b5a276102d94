import pytest

from support.cli import PiRunner
from support.llm_server import LlmServer


@pytest.fixture
def server():
    with LlmServer() as running:
        yield running


@pytest.fixture
def pi(tmp_path, server):
    return PiRunner(tmp_path, server)
