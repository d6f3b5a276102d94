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


def _open_settings(page):
    show_sessions(page)
    page.get_by_test_id("open-settings").click()
    expect_visible = page.get_by_test_id("settings")
    from playwright.sync_api import expect

    expect(expect_visible).to_be_visible()


def test_defaults_saved_for_the_project_go_to_its_settings_file_and_win_there(two_models, pages, served, pi, width):
    """Scope "this project": the session folder's .pi/settings.json gets the defaults
    (the user's file is left alone), and saving for the user then says the project wins."""
    from playwright.sync_api import expect

    pi.trust_project()
    user_file = pi.agent_dir / "settings.json"
    user_file.write_text(json.dumps({"theme": "dark", "defaultThinkingLevel": "low"}))
    page = pages.open(width)
    new_session(page)
    _open_settings(page)
    scope = page.get_by_test_id("set-scope")
    expect(scope).to_have_value("user")  # as pi's /settings: the user's file unless asked
    scope.select_option("project")
    project_file = pi.cwd / ".pi" / "settings.json"
    expect(page.get_by_test_id("set-scope-file")).to_have_text(f"Saved in {project_file}")
    page.get_by_test_id("set-model").select_option("local/other-model")
    page.get_by_test_id("set-thinking").select_option("high")
    page.get_by_test_id("settings-save").click()
    expect(page.get_by_test_id("settings")).to_be_hidden()

    assert json.loads(project_file.read_text()) == {
        "defaultProvider": "local", "defaultModel": "other-model", "defaultThinkingLevel": "high"}
    assert json.loads(user_file.read_text()) == {"theme": "dark", "defaultThinkingLevel": "low"}
    _open_settings(page)
    page.get_by_test_id("set-scope").select_option("user")
    expect(page.get_by_test_id("set-scope-file")).to_contain_text(
        f"this project's {project_file} sets defaultProvider, defaultModel, defaultThinkingLevel, which wins here")
    expect(page.get_by_test_id("set-thinking")).to_have_value("high")  # what is in effect here
    pages.shoot(page, f"settings-scope-{width}")
    session = served.http.post("/api/sessions", json={"cwd": served.cwd}).json()["id"]
    state = served.socket(session).ok("get_state")
    assert (state["model"]["id"], state["thinkingLevel"]) == ("other-model", "high")


def test_an_untrusted_projects_settings_file_is_never_written(two_models, pages, served, pi, tmp_path, width):
    """The settings view is about the session's folder, not the server's: in an untrusted
    one "this project" cannot be chosen, and the server refuses it even when asked."""
    from playwright.sync_api import expect

    elsewhere = tmp_path / "untrusted-project"
    (elsewhere / ".pi").mkdir(parents=True)
    # the server's own folder is trusted; the session's is trusted only for holding
    # nothing to protect yet, which a settings file would end (then it would be skipped)
    pi.trust_project()
    session = served.http.post("/api/sessions", json={"cwd": str(elsewhere)}).json()["id"]
    page = pages.open(width)
    show_sessions(page)
    page.locator(f'#sessions li[data-id="{session}"]').click()
    expect(page.locator("#title")).to_contain_text(str(elsewhere.resolve()))
    _open_settings(page)
    project = page.get_by_test_id("set-scope").locator('option[value="project"]')
    expect(project).to_be_disabled()
    expect(project).to_have_text("this project (not trusted)")
    refused = served.http.put("/api/settings", json={"scope": "project", "cwd": str(elsewhere),
                                                     "defaultThinkingLevel": "high"})
    assert refused.status_code == 403
    assert "not a trusted project" in refused.json()["error"]
    page.get_by_test_id("set-thinking").select_option("medium")
    page.get_by_test_id("settings-save").click()  # for the user: that is allowed
    expect(page.get_by_test_id("settings")).to_be_hidden()
    assert not (elsewhere / ".pi" / "settings.json").exists()
    assert not (pi.cwd / ".pi" / "settings.json").exists()
    assert json.loads((pi.agent_dir / "settings.json").read_text())["defaultThinkingLevel"] == "medium"


def test_a_bare_pi_folder_inside_a_trusted_project_takes_the_projects_saves(two_models, pages, served, pi, width):
    """A session in a sub-folder of a project trusted with /trust, holding a bare ``.pi``
    of its own: the saved decision covers it (pi's closest saved decision), so "this
    project" is offered and saves to that folder's .pi/settings.json, which then applies."""
    from playwright.sync_api import expect

    pi.trust_project()
    below = pi.cwd / "packages" / "web"
    (below / ".pi").mkdir(parents=True)
    session = served.http.post("/api/sessions", json={"cwd": str(below)}).json()["id"]
    page = pages.open(width)
    show_sessions(page)
    page.locator(f'#sessions li[data-id="{session}"]').click()
    expect(page.locator("#title")).to_contain_text(str(below.resolve()))
    _open_settings(page)
    scope = page.get_by_test_id("set-scope")
    expect(scope.locator('option[value="project"]')).to_be_enabled()
    scope.select_option("project")
    project_file = below.resolve() / ".pi" / "settings.json"
    expect(page.get_by_test_id("set-scope-file")).to_have_text(f"Saved in {project_file}")
    page.get_by_test_id("set-thinking").select_option("high")
    page.get_by_test_id("settings-save").click()
    expect(page.get_by_test_id("settings")).to_be_hidden()
    assert json.loads(project_file.read_text()) == {"defaultThinkingLevel": "high"}
    later = served.http.post("/api/sessions", json={"cwd": str(below), "model": "local/other-model"}).json()["id"]
    assert served.socket(later).ok("get_state")["thinkingLevel"] == "high"  # the project's file applies
