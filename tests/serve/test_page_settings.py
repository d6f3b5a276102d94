"""The settings view in real Chromium at 1280 and 375 px: the theme (kept in the
browser), a new session's default model and thinking level (settings.json) and a
provider key (auth.json, 0600, never sent back to the page)."""

from __future__ import annotations

import json
import stat

import pytest
from support.serve_page import new_session, show_sessions

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]


@pytest.fixture
def two_models(pi, server):
    models = [{"id": "test-model"}, {"id": "other-model", "reasoning": True}]
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", models=models)))


def test_the_theme_defaults_and_a_provider_key_are_set_in_the_settings_view(two_models, pages, served, pi, width):
    from playwright.sync_api import expect

    page = pages.open(width, scheme="dark")
    new_session(page)
    show_sessions(page)
    page.get_by_test_id("open-settings").click()
    view = page.get_by_test_id("settings")
    expect(view).to_be_visible()
    page.get_by_test_id("set-theme").select_option("light")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"
    expect(page.get_by_test_id("set-model")).to_contain_text("local/other-model")
    page.get_by_test_id("set-model").select_option("local/other-model")
    page.get_by_test_id("set-thinking").select_option("high")
    provider = page.get_by_test_id("set-provider")
    provider.select_option("anthropic")
    page.get_by_test_id("set-key").fill("sk-ant-test-key-123")
    page.get_by_test_id("settings-store-key").click()
    expect(page.get_by_test_id("set-keys")).to_contain_text("anthropic")
    assert page.get_by_test_id("set-key").input_value() == ""
    pages.shoot(page, f"settings-{width}")
    page.get_by_test_id("settings-save").click()
    expect(view).to_be_hidden()

    saved = json.loads((pi.agent_dir / "settings.json").read_text())
    assert (saved["defaultProvider"], saved["defaultModel"], saved["defaultThinkingLevel"]) == \
        ("local", "other-model", "high")
    auth = pi.agent_dir / "auth.json"
    assert json.loads(auth.read_text())["anthropic"] == {"type": "api_key", "key": "sk-ant-test-key-123"}
    assert stat.S_IMODE(auth.stat().st_mode) == 0o600
    assert "sk-ant-test-key-123" not in served.http.get("/api/settings").text
    # a session that names no model starts on the new defaults (the page's New keeps the
    # model of the session it is on, as pi's /new does)
    session = served.http.post("/api/sessions", json={"cwd": served.cwd}).json()["id"]
    state = served.socket(session).ok("get_state")
    assert (state["model"]["id"], state["thinkingLevel"]) == ("other-model", "high")
    page.reload()  # the theme is kept in the browser
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"


def test_the_settings_view_is_used_with_the_keyboard_alone(pages, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    new_session(page)
    show_sessions(page)
    page.get_by_test_id("open-settings").focus()
    page.keyboard.press("Enter")
    expect(page.get_by_test_id("set-theme")).to_be_focused()
    for _ in range(12):  # Tab stays inside the view
        page.keyboard.press("Tab")
        assert page.evaluate("document.getElementById('settings').contains(document.activeElement)")
    page.keyboard.press("Escape")
    expect(page.get_by_test_id("settings")).to_be_hidden()
    expect(page.get_by_test_id("open-settings")).to_be_focused()
