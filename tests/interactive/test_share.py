"""/share: the HTML export as a secret gist, against a local GitHub API server."""

import pytest
from support.llm_server import Reply
from support.share_servers import GistApi

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)


@pytest.fixture
def gist_api():
    api = GistApi()
    yield api
    api.close()


def test_share_prints_the_gists_link_and_the_server_received_the_export(pi_tui, server, gist_api):
    server.push(Reply(text="Shared wisdom."))
    term = pi_tui(env={"PI_GITHUB_API_URL": gist_api.url, "GITHUB_TOKEN": "ghp_test"})
    term.submit("tell me something")
    term.wait_for("Shared wisdom.")
    term.wait_idle()
    term.submit("/share")
    screen = term.wait_drawn("Gist: https://gist.example/u/abc123")
    assert "Share URL: https://pi.dev/session/#abc123" in screen
    [(path, headers, body)] = gist_api.received
    assert path == "/gists" and headers["Authorization"] == "Bearer ghp_test"
    assert body["public"] is False
    html = body["files"]["session.html"]["content"]
    assert html.startswith("<!DOCTYPE html") and "Shared wisdom." in html and "tell me something" in html


def test_share_without_a_token_says_how_to_get_one(pi_tui):
    term = pi_tui()
    term.submit("/share")
    term.wait_drawn("Cannot share: set GITHUB_TOKEN, or log in with 'gh auth login'.")


def test_share_reports_the_apis_refusal(pi_tui, server):
    api = GistApi(status=401)
    try:
        term = pi_tui(env={"PI_GITHUB_API_URL": api.url, "GITHUB_TOKEN": "bad"})
        term.submit("/share")
        term.wait_drawn("Failed to create gist:")
        assert "401: Bad credentials" in term.screen()
    finally:
        api.close()
