import pytest

from support.llm_server import LlmServer


@pytest.fixture
def server():
    with LlmServer() as running:
        yield running
