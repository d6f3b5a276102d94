import pytest

from support.llm_server import llm_server  # noqa: F401  (the fixture)
from support.provider_streams import PROVIDERS


@pytest.fixture(params=sorted(PROVIDERS))
def api(request):
    """Each wire API in turn."""
    return request.param
