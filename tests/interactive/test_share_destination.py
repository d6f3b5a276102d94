"""``sessionShareDestination`` (pi 1.6): ``/share`` uploads the branch to Radius as an
artifact when Radius is signed in (``auto``, the default) and makes a gist otherwise;
``gist`` always makes a gist; ``radius`` never falls back to one. Against local
stand-ins of Radius's artifact route and of GitHub's gist API."""

import json

import pytest
from support.llm_server import Reply
from support.share_servers import ArtifactApi, GistApi

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)


@pytest.fixture
def apis():
    radius, gist = ArtifactApi(), GistApi()
    yield radius, gist
    radius.close()
    gist.close()


def _env(radius, gist, **more):
    return {"PI_PROVIDER_ORIGINS": json.dumps({"https://radius.pi.dev": radius.url}),
            "PI_GITHUB_API_URL": gist.url, "GITHUB_TOKEN": "ghp_test", **more}


def test_share_uploads_the_branch_to_radius_when_signed_in(pi_tui, server, apis):
    radius, gist = apis
    server.push(Reply(text="Radius wisdom."))
    term = pi_tui(env=_env(radius, gist, RADIUS_API_KEY="rk-test"))
    term.submit("tell me something")
    term.wait_for("Radius wisdom.")
    term.wait_idle()
    term.submit("/share")
    term.wait_drawn("Share URL: https://radius.example/a/xyz")
    assert gist.received == []
    [(path, headers, body)] = radius.received
    assert path == "/v1/artifacts?visibility=organization&title=Pi+session"
    assert headers["Authorization"] == "Bearer rk-test" and headers["Content-Type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in body.decode().splitlines()]
    assert lines[0]["type"] == "session"
    roles = [line["message"]["role"] for line in lines if line["type"] == "message"]
    assert roles == ["system", "user", "assistant"]  # the branch as the session has it: 1.6's system message first
    share = lines[-1]
    assert share["customType"] == "pi.share" and share["parentId"] == lines[-2]["id"]
    assert "read" in [tool["name"] for tool in share["data"]["tools"]] and share["data"]["systemPrompt"]


def test_share_destination_gist_makes_a_gist_even_when_radius_is_signed_in(pi_tui, apis):
    radius, gist = apis
    term = pi_tui(env=_env(radius, gist, RADIUS_API_KEY="rk-test"), settings={"sessionShareDestination": "gist"})
    term.submit("/share")
    term.wait_drawn("Gist: https://gist.example/u/abc123")
    assert radius.received == [] and len(gist.received) == 1


def test_share_destination_radius_without_radius_never_falls_back_to_a_gist(pi_tui, apis):
    radius, gist = apis
    term = pi_tui(env=_env(radius, gist), settings={"sessionShareDestination": "radius"})
    term.submit("/share")
    term.wait_drawn("Radius authentication is not configured. Run '/login radius' first.")
    assert radius.received == [] and gist.received == []


def test_a_radius_refusal_is_reported_with_its_error(pi_tui, apis):
    gist = apis[1]
    refusing = ArtifactApi(status=403)
    try:
        term = pi_tui(env=_env(refusing, gist, RADIUS_API_KEY="rk-test"))
        term.submit("/share")
        term.wait_drawn("Failed to upload Radius artifact: not allowed")
        assert gist.received == []
    finally:
        refusing.close()
