"""pi 1.6's Anthropic extra-usage warning: a chat on an Anthropic model whose credential is
a Claude subscription says once that a third-party harness draws on paid extra usage (at
the start, or when the chat switches to such a model); an API key, another provider or
``warnings.anthropicExtraUsage: false`` shows nothing."""

from __future__ import annotations

import json

WARNING = "Anthropic subscription auth is active. Third-party harness usage draws from extra usage"
SUBSCRIPTION = "sk-ant-oat01-test-token"
ANTHROPIC = ("--model", "anthropic/claude-haiku-4-5")


def flat(screen: str) -> str:
    return "".join(screen.split())


def test_a_subscription_token_shows_the_warning_once_at_the_start(pi_screen, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", SUBSCRIPTION)
    term = pi_screen(*ANTHROPIC)
    screen = term.wait_for("extra usage")
    assert flat(f"Warning: {WARNING}") in flat(screen)
    assert flat("Disable this warning in /settings.") in flat(screen)
    term.submit("/model anthropic/claude-fable-5")  # another Anthropic model: not again
    term.wait_for("Model: anthropic/claude-fable-5")
    assert flat(term.screen()).count(flat(WARNING)) == 1


def test_a_sign_in_shows_it_when_the_chat_switches_to_anthropic(pi_screen):
    sign_in = {"anthropic": {"type": "oauth", "access": "token", "refresh": "r", "expires": 9_999_999_999_999}}
    term = pi_screen(agent_files={"auth.json": json.dumps(sign_in)})
    assert "extra usage" not in term.screen()  # the local model first
    term.submit("/model anthropic/claude-haiku-4-5")
    term.wait_for("Model: anthropic/claude-haiku-4-5")
    assert flat(WARNING) in flat(term.wait_for("extra usage"))


def test_an_api_key_shows_nothing(pi_screen, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-plain-key")
    term = pi_screen(*ANTHROPIC)
    term.submit("/model anthropic/claude-fable-5")
    term.wait_for("Model: anthropic/claude-fable-5")
    assert "extra usage" not in term.screen()


def test_the_setting_turns_it_off(pi_screen, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_OAUTH_TOKEN", SUBSCRIPTION)
    term = pi_screen(*ANTHROPIC, settings={"warnings": {"anthropicExtraUsage": False}})
    term.submit("/model anthropic/claude-fable-5")
    term.wait_for("Model: anthropic/claude-fable-5")
    assert "extra usage" not in term.screen()
