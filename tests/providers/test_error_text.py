"""pi 1.6's words for failures where its SDK says something other than the server's
JSON: a body that is not JSON, and Codex's usage-limit sentence (in-process; the JSON
cases are compared with pi 1.6 itself in test_error_text_pi16)."""

import time

from pi_plugins.providers.error_text import codex_text, google_text, mistral_text, responses_text, truncated


def test_a_responses_body_that_is_not_json_is_the_openai_sdks_status_and_text():
    assert responses_text("local API error", 502, None, "upstream went away\n") == \
        "local API error (502): 502 upstream went away"
    assert responses_text("OpenAI API error", 500, {"detail": "x"}, '{"detail": "x"}') == \
        "OpenAI API error (500): 500 status code (no body)"


def test_a_google_body_that_is_not_json_is_wrapped_as_its_sdk_wraps_it():
    assert google_text(502, "Bad Gateway", None, "upstream went away") == \
        '{"error":{"message":"upstream went away","code":502,"status":"Bad Gateway"}}'


def test_mistral_shows_the_body_as_it_came_cut_at_4000_characters():
    assert mistral_text(502, "Bad Gateway", "  upstream went away ") == "Mistral API error (502): upstream went away"
    assert mistral_text(502, "Bad Gateway", "") == "Mistral API error (502): Bad Gateway"
    assert truncated("x" * 4005) == "x" * 4000 + "... [truncated 5 chars]"


def test_codex_says_the_usage_limit_in_pi16s_sentence_else_the_servers_message():
    resets = time.time() + 30 * 60
    body = {"error": {"code": "usage_limit_reached", "plan_type": "PLUS", "resets_at": resets, "message": "limit"}}
    assert codex_text(429, "Too Many Requests", body, "…") == \
        "You have hit your ChatGPT usage limit (plus plan). Try again in ~30 min."
    assert codex_text(400, "Bad Request", {"error": {"message": "bad input"}}, "…") == "bad input"
    assert codex_text(502, "Bad Gateway", None, "upstream went away") == "upstream went away"
