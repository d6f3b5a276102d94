"""Numeric settings of the wrong type, side by side with pi 1.6: a compaction token
setting or a request timeout it cannot read stops with 1.6's own message (ours before
anything is sent; 1.6 stops a compaction setting only after the first answer, which it
then drops); ``retry.*`` numbers written as text count as numbers, as JavaScript counts
them; text that is no number is warned about and the default used (1.6 computes with NaN
and, for ``retry.maxRetries``, retries forever)."""

import json

import pytest
from support.cli import pi16
from support.llm_server import Reply

pytestmark = [pytest.mark.process, pytest.mark.requires("pi16")]


def _both(pi, server, settings: dict, reply: Reply | None = None):
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", apiKey="test-key")))
    (pi.agent_dir / "settings.json").write_text(json.dumps(settings))
    runs = {}
    for who, run in (("pi16", pi16), ("ours", lambda r, *a: r.run(*a))):
        before = len(server.requests)
        if reply is None:
            server.push(Reply(text="answered"))
        else:
            server.default = lambda request: reply
        runs[who] = run(pi, "--no-session", "-p", "hi"), len(server.requests) - before
        server.replies.clear()
    server.default = None
    return runs


@pytest.mark.parametrize("settings, message", [
    ({"compaction": {"reserveTokens": "x"}},
     "Invalid compaction.reserveTokens setting: x. Expected a non-negative safe integer."),
    ({"compaction": {"keepRecentTokens": "20000"}},
     "Invalid compaction.keepRecentTokens setting: 20000. Expected a non-negative safe integer."),
    ({"compaction": {"reserveTokens": 1.5}},
     "Invalid compaction.reserveTokens setting: 1.5. Expected a non-negative safe integer."),
    ({"compaction": {"modelOverrides": {"local/test-model": {"keepRecentTokens": -1}}}},
     'Invalid compaction.modelOverrides["local/test-model"].keepRecentTokens setting: -1. '
     "Expected a non-negative safe integer."),
    ({"httpIdleTimeoutMs": "soon"}, "Invalid httpIdleTimeoutMs setting: soon"),
    ({"websocketConnectTimeoutMs": True}, "Invalid websocketConnectTimeoutMs setting: true"),
])
def test_a_setting_pi16_cannot_read_stops_with_its_message(pi, server, settings, message):
    runs = _both(pi, server, settings)
    (theirs, _), (ours, sent) = runs["pi16"], runs["ours"]
    assert theirs.returncode != 0 and message in theirs.stderr
    assert ours.returncode != 0 and message in ours.stderr and ours.stdout == ""
    assert sent == 0  # refused before the request, where pi 1.6 sends it and drops the answer


def test_retry_numbers_written_as_text_count_as_numbers(pi, server):
    settings = {"retry": {"maxRetries": "1", "baseDelayMs": "5", "provider": {"maxRetries": 0}}}
    runs = _both(pi, server, settings, Reply(status=503, error="overloaded"))
    for who, (done, sent) in runs.items():
        assert done.returncode == 1 and "overloaded" in done.stderr, who
        assert sent == 2, who  # the first attempt and retry.maxRetries = "1" more
    assert "warning" not in runs["ours"][0].stderr


def test_retry_numbers_that_are_not_numbers_are_warned_about_and_the_defaults_used(pi, server):
    (pi.agent_dir / "settings.json").write_text(json.dumps(
        {"retry": {"maxRetries": "twice", "baseDelayMs": 5, "provider": {"maxRetries": 0}},
         "branchSummary": {"reserveTokens": [1]}}))
    server.default = lambda request: Reply(status=503, error="overloaded")
    done = pi.run("--no-session", "-p", "hi")
    assert done.returncode == 1
    assert 'warning: retry.maxRetries: expected a number, not "twice"; the default (3) is used' in done.stderr
    assert "warning: branchSummary.reserveTokens: expected a number, not [1]; the default (16384) is used" \
        in done.stderr
    assert len(server.requests) == 4  # 1 + the default 3 retries
