import pytest

from support.agents import build_agent


@pytest.fixture
def make_agent():
    """Build an agent from the core, a scripted provider and the given plugins."""
    return build_agent
