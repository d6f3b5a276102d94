import pytest
from support.llm_server import llm_server  # noqa: F401  (the fixture)
from support.provider_streams import PROVIDERS


@pytest.fixture(params=sorted(PROVIDERS))
def api(request):
    """Each wire API in turn."""
    return request.param


@pytest.fixture(autouse=True)
def _aws_test_credentials(monkeypatch):
    """Bedrock signs every request without a key: with these test credentials, never the
    user's files or an instance's metadata service."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDPIHARNESSTEST")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "pi-harness-test-secret")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_REGION", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(name, raising=False)
