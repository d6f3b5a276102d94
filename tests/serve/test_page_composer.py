"""The prompt box in real Chromium at 1280 and 375 px: the page's slash commands (run in
the page, never sent to the model) with completion, prompt history with ↑, the model and
thinking-level selectors, and attachments (images to the model as images, text files as
text)."""

from __future__ import annotations

import base64
import json

import pytest
from support.llm_server import Reply
from support.serve_page import new_session, send

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]

ASSISTANT = '[data-testid="message"][data-role="assistant"]'
USER = '[data-testid="message"][data-role="user"]'
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


@pytest.fixture
def thinking_models(pi, server):
    models = [{"id": "test-model", "reasoning": True}, {"id": "other-model"}]
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", models=models)))


def test_slash_commands_complete_and_run_in_the_page_not_at_the_model(thinking_models, pages, served, server, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    session = new_session(page)
    box = page.get_by_test_id("prompt")
    box.fill("/na")
    completions = page.get_by_test_id("completion")
    expect(completions).to_have_count(1)
    expect(completions).to_contain_text("/name")
    pages.shoot(page, f"completion-{width}")
    box.press("Tab")
    assert box.input_value() == "/name "
    box.type("Planning")
    box.press("Enter")
    expect(page.locator("#title")).to_contain_text("Planning")
    box.fill("/thinking high")
    box.press("Enter")
    expect(page.get_by_test_id("thinking")).to_have_value("high")
    box.fill("/model other")
    box.press("Enter")
    expect(page.get_by_test_id("model")).to_have_value("local/other-model")
    state = served.socket(session).ok("get_state")
    assert (state["sessionName"], state["model"]["id"]) == ("Planning", "other-model")
    assert server.requests == []  # none of it went to the model
    expect(page.locator(USER)).to_have_count(0)
    box.fill("/new")
    box.press("Enter")
    page.wait_for_function("(old) => document.querySelector('#sessions li.current')?.dataset.id !== old", arg=session)


def test_the_thinking_selector_sets_the_sessions_level(thinking_models, pages, served, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    session = new_session(page)
    selector = page.get_by_test_id("thinking")
    expect(selector).to_be_enabled()
    selector.select_option("low")
    page.wait_for_timeout(100)
    for _ in range(100):
        if served.socket(session).ok("get_state")["thinkingLevel"] == "low":
            break
        page.wait_for_timeout(50)
    assert served.socket(session).ok("get_state")["thinkingLevel"] == "low"


def test_arrow_up_brings_back_the_prompts_sent_before(pages, server, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    server.push(Reply(text="One."), Reply(text="Two."))
    new_session(page)
    send(page, "first prompt")
    expect(page.locator(ASSISTANT)).to_have_text("One.")
    send(page, "second prompt")
    expect(page.locator(ASSISTANT).last).to_have_text("Two.")
    box = page.get_by_test_id("prompt")
    box.focus()
    box.press("ArrowUp")
    assert box.input_value() == "second prompt"
    box.press("Home")
    box.press("ArrowUp")
    assert box.input_value() == "first prompt"
    box.press("End")
    box.press("ArrowDown")
    assert box.input_value() == "second prompt"


@pytest.fixture
def seeing_model(pi, server):
    models = [{"id": "test-model", "input": ["text", "image"]}]
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", models=models)))


def test_attached_images_go_as_images_and_text_files_as_text(seeing_model, pages, server, width, tmp_path):
    from playwright.sync_api import expect

    page = pages.open(width)
    server.push(Reply(text="I see a dot and your notes."))
    new_session(page)
    (tmp_path / "dot.png").write_bytes(PNG)
    (tmp_path / "notes.txt").write_text("remember the milk\n")
    page.get_by_test_id("file-input").set_input_files([str(tmp_path / "dot.png"), str(tmp_path / "notes.txt")])
    expect(page.get_by_test_id("attachment")).to_have_count(2)
    pages.shoot(page, f"attachments-{width}")
    send(page, "what is attached?")
    expect(page.locator(ASSISTANT)).to_have_text("I see a dot and your notes.")
    expect(page.get_by_test_id("attachment")).to_have_count(0)
    expect(page.locator(f"{USER} img.attached")).to_have_count(1)
    content = server.requests[0].body["messages"][-1]["content"]
    texts = [part["text"] for part in content if part["type"] == "text"]
    images = [part for part in content if part["type"] == "image_url"]
    assert texts and texts[0].startswith("what is attached?")
    assert '<file name="notes.txt">\nremember the milk\n' in texts[0]
    assert len(images) == 1 and images[0]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(PNG).decode()


def test_a_pasted_image_is_attached(pages, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    new_session(page)
    page.get_by_test_id("prompt").focus()
    page.evaluate("""(b64) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const data = new DataTransfer();
        data.items.add(new File([bytes], "pasted.png", { type: "image/png" }));
        document.getElementById('prompt').dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    }""", base64.b64encode(PNG).decode())
    expect(page.get_by_test_id("attachment")).to_contain_text("pasted.png")


def test_a_text_file_dropped_on_the_chat_is_attached(pages, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    new_session(page)
    page.evaluate("""() => {
        const data = new DataTransfer();
        data.items.add(new File(["dropped text"], "dropped.md", { type: "text/markdown" }));
        document.getElementById('messages').dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    }""")
    expect(page.get_by_test_id("attachment")).to_contain_text("dropped.md")
    page.get_by_test_id("attachment").get_by_role("button").click()  # and removed again
    expect(page.get_by_test_id("attachment")).to_have_count(0)
