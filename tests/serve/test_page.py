"""The page at ``/`` in real headless Chromium (Debian's ``chromium`` through Playwright),
against the scripted LLM server: what a person sees and what their clicks and keys do."""

from __future__ import annotations

import json
import threading

import pytest

from support.llm_server import Reply

from support.serve_page import new_session as _new_session

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]

ASSISTANT = '[data-testid="message"][data-role="assistant"]'
USER = '[data-testid="message"][data-role="user"]'
TOOL = '[data-testid="message"][data-role="tool"]'


def test_the_page_drops_the_token_from_the_address_bar_and_keeps_working_after_a_reload(page, served):
    from playwright.sync_api import expect

    _new_session(page)
    assert served.token not in page.evaluate("location.href")
    assert served.token not in page.evaluate("JSON.stringify(history.state) + document.referrer")
    page.reload()
    expect(page.locator("#status")).to_have_text("ready")  # the token held in the tab's storage
    assert served.token not in page.evaluate("location.href")


def test_a_prompt_typed_into_the_box_streams_an_answer_into_the_messages(page, server):
    from playwright.sync_api import expect

    server.push(Reply(text="Hello from the **model**, streamed in small pieces.", delta_size=3, delay=0.01))
    _new_session(page)
    box = page.get_by_test_id("prompt")
    box.click()
    box.type("first line")
    box.press("Shift+Enter")  # a new line, not a send
    box.type("second line")
    assert box.input_value() == "first line\nsecond line"
    box.press("Enter")
    expect(page.locator(USER)).to_have_text("first line\nsecond line")
    answer = page.locator(ASSISTANT)
    expect(answer).to_have_text("Hello from the model, streamed in small pieces.")
    expect(answer.locator("strong")).to_have_text("model")
    assert box.input_value() == ""
    assert server.requests[0].body["messages"][-1]["content"][0]["text"] == "first line\nsecond line"


def test_thinking_is_collapsed_until_opened(page, server):
    from playwright.sync_api import expect

    server.push(Reply(thinking="Weighing the options.", text="Decided."))
    _new_session(page)
    page.get_by_test_id("prompt").fill("think")
    page.get_by_test_id("send").click()
    expect(page.locator(ASSISTANT)).to_contain_text("Decided.")
    thinking = page.locator(f"{ASSISTANT} details.thinking")
    expect(thinking.locator(".thinking-text")).to_be_hidden()
    thinking.locator("summary").click()
    expect(thinking.locator(".thinking-text")).to_have_text("Weighing the options.")


def test_tool_calls_show_their_output_bash_diffs_and_read_excerpts(page, server, pi):
    from playwright.sync_api import expect

    (pi.cwd / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    server.push(Reply(tool_calls=[("bash", {"command": "echo tool-output-42"})]),
                Reply(tool_calls=[("edit", {"path": "notes.txt", "edits": [{"oldText": "beta", "newText": "BETA"}]})]),
                Reply(tool_calls=[("read", {"path": "notes.txt"})]),
                Reply(text="All three tools ran."))
    _new_session(page)
    page.get_by_test_id("prompt").fill("use the tools")
    page.get_by_test_id("prompt").press("Enter")
    expect(page.locator(ASSISTANT).last).to_have_text("All three tools ran.")
    tools = page.locator(TOOL)
    expect(tools).to_have_count(3)
    expect(tools.nth(0).locator(".tool-head")).to_contain_text("bash echo tool-output-42")
    expect(tools.nth(0).locator("pre")).to_contain_text("tool-output-42")
    expect(tools.nth(1).locator(".diff .del")).to_contain_text("beta")
    expect(tools.nth(1).locator(".diff .add")).to_contain_text("BETA")
    expect(tools.nth(2).locator("pre")).to_contain_text("alpha\nBETA\ngamma")


def test_reloading_the_page_mid_answer_loses_nothing(page, server):
    from playwright.sync_api import expect

    hold = threading.Event()
    server.push(Reply(text="Part one of the answer, then part two after the reload.", delta_size=5,
                      hold_after=4, hold=hold))
    _new_session(page)
    page.get_by_test_id("prompt").fill("a long one")
    page.get_by_test_id("prompt").press("Enter")
    expect(page.locator(ASSISTANT)).to_contain_text("Part one")
    page.reload()
    expect(page.locator(USER)).to_have_text("a long one")
    expect(page.locator(ASSISTANT)).to_contain_text("Part one")
    hold.set()
    expect(page.locator(ASSISTANT)).to_have_text("Part one of the answer, then part two after the reload.")
    expect(page.locator(USER)).to_have_count(1)
    expect(page.locator(ASSISTANT)).to_have_count(1)
    expect(page.locator("#status")).to_have_text("ready")


ARTIFACT = """Here is a page:

```html
<!doctype html>
<p id="result">running</p>
<script>
  let verdict;
  try { verdict = "reached " + parent.document.title; } catch (error) { verdict = "blocked: " + error.name; }
  document.getElementById("result").textContent = verdict;
</script>
```
"""


def test_an_artifact_renders_in_a_sandboxed_frame_that_cannot_reach_the_page(page, server):
    from playwright.sync_api import expect

    server.push(Reply(text=ARTIFACT))
    _new_session(page)
    page.get_by_test_id("prompt").fill("make a page")
    page.get_by_test_id("prompt").press("Enter")
    page.get_by_test_id("artifact-open").click()
    frame = page.get_by_test_id("artifact")
    assert frame.get_attribute("sandbox") == "allow-scripts"
    expect(page.frame_locator('[data-testid="artifact"]').locator("#result")).to_have_text("blocked: SecurityError")
    # the code itself is shown as text in the chat, never run there
    expect(page.locator(f"{ASSISTANT} pre code")).to_contain_text("parent.document")
    assert page.evaluate("document.querySelectorAll('#messages script').length") == 0


HOSTILE = """<img src=x onerror="window.pwned='img'"> <script>window.pwned='script'</script>
[click](javascript:window.pwned='link') <b onmouseover="window.pwned='b'">bold?</b>
<iframe src="javascript:parent.pwned='frame'"></iframe>"""


def test_markdown_from_the_model_never_puts_its_html_or_script_in_the_page(page, server):
    from playwright.sync_api import expect

    server.push(Reply(text=HOSTILE))
    _new_session(page)
    page.get_by_test_id("prompt").fill("be hostile")
    page.get_by_test_id("prompt").press("Enter")
    answer = page.locator(ASSISTANT)
    expect(answer).to_contain_text("<script>window.pwned='script'</script>")
    expect(answer).to_contain_text('<img src=x onerror="window.pwned=\'img\'">')
    counts = page.evaluate("""() => { const m = document.getElementById('messages');
        return ['img', 'script', 'iframe', 'b', 'a'].map((t) => m.querySelectorAll(t).length); }""")
    assert counts == [0, 0, 0, 0, 0]
    answer.hover()
    assert page.evaluate("window.pwned") is None


def test_a_plugins_confirm_appears_in_the_page_and_its_answer_reaches_the_plugin(confirm_plugin, pages, width, server):
    from playwright.sync_api import expect

    page = pages.open(width)

    server.push(Reply(tool_calls=[("bash", {"command": "echo confirmed-run"})]), Reply(text="Ran after you agreed."))
    _new_session(page)
    page.get_by_test_id("prompt").fill("run something")
    page.get_by_test_id("prompt").press("Enter")
    dialog = page.get_by_test_id("dialog")
    expect(dialog.locator("h2")).to_have_text("Run this command?")
    expect(dialog.locator("p")).to_have_text("echo confirmed-run")
    pages.shoot(page, f"confirm-{width}")
    page.get_by_test_id("dialog-yes").click()
    expect(dialog).to_be_hidden()
    expect(page.locator(TOOL).locator("pre")).to_contain_text("confirmed-run")
    expect(page.locator(ASSISTANT).last).to_have_text("Ran after you agreed.")


def test_a_confirm_answered_before_a_reload_is_not_asked_again(confirm_plugin, pages, width, server):
    from playwright.sync_api import expect

    page = pages.open(width)

    hold = threading.Event()
    server.push(Reply(tool_calls=[("bash", {"command": "echo once"})]),
                Reply(text="Still going after the answer.", hold_after=2, hold=hold))
    _new_session(page)
    page.get_by_test_id("prompt").fill("ask once")
    page.get_by_test_id("prompt").press("Enter")
    page.get_by_test_id("dialog-yes").click()
    expect(page.locator(ASSISTANT).last).to_contain_text("Still")
    page.reload()
    expect(page.locator(TOOL).locator("pre")).to_contain_text("once")
    expect(page.get_by_test_id("dialog")).to_be_hidden()
    hold.set()
    expect(page.locator(ASSISTANT).last).to_have_text("Still going after the answer.")


def test_the_page_and_a_script_share_a_run_and_a_steer_from_the_page_reaches_it(pages, width, served, server):
    from playwright.sync_api import expect

    page = pages.open(width)

    hold = threading.Event()
    server.push(Reply(text="Started by the script. " * 3, hold_after=3, hold=hold),
                Reply(text="Steered by the page."))
    session = _new_session(page)
    script = served.socket(session)
    script.ok("prompt", message="from the script")
    expect(page.locator(ASSISTANT)).to_contain_text("Started")
    expect(page.get_by_test_id("abort")).to_be_enabled()
    page.get_by_test_id("prompt").fill("from the page, mid-run")
    page.get_by_test_id("prompt").press("Enter")
    script.event("queue_update", steering=["from the page, mid-run"])
    expect(page.locator("#queue")).to_contain_text("from the page, mid-run")
    pages.shoot(page, f"steering-{width}")
    hold.set()
    expect(page.locator(ASSISTANT).last).to_have_text("Steered by the page.")
    users = [m["content"][0]["text"] for m in script.ok("get_messages")["messages"] if m["role"] == "user"]
    assert users == ["from the script", "from the page, mid-run"]
    expect(page.locator(USER)).to_have_count(2)


def test_abort_stops_the_running_turn(pages, width, server):
    from playwright.sync_api import expect

    page = pages.open(width)

    hold = threading.Event()
    server.push(Reply(text="This answer never ends. " * 20, hold_after=3, hold=hold))
    _new_session(page)
    page.get_by_test_id("prompt").fill("go on forever")
    page.get_by_test_id("prompt").press("Enter")
    expect(page.locator(ASSISTANT)).to_contain_text("This answer")
    page.get_by_test_id("abort").click()
    expect(page.locator(f"{ASSISTANT} .error")).to_have_text("Aborted")
    expect(page.get_by_test_id("abort")).to_be_disabled()
    hold.set()


@pytest.fixture
def two_models(pi, server):
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", models=["test-model", "other-model"])))


def test_the_model_selector_switches_the_sessions_model(two_models, page, served):
    from playwright.sync_api import expect

    session = _new_session(page)
    selector = page.get_by_test_id("model")
    expect(selector).to_have_value("local/test-model")
    selector.select_option("local/other-model")
    harness = served.live(session).harness
    page.wait_for_function("() => document.getElementById('status').textContent === 'ready'")
    for _ in range(100):  # set_model goes over the page's socket: its effect, on the server
        if harness.model.id == "other-model":
            break
        page.wait_for_timeout(50)
    assert served.socket(session).ok("get_state")["model"]["id"] == "other-model"
    expect(selector).to_have_value("local/other-model")


def test_the_session_list_opens_sessions_and_makes_new_ones(page, served, server):
    from playwright.sync_api import expect

    server.push(Reply(text="Answer in the first session."))
    first = _new_session(page)
    page.get_by_test_id("prompt").fill("first session")
    page.get_by_test_id("prompt").press("Enter")
    expect(page.locator(ASSISTANT)).to_have_text("Answer in the first session.")
    second = _new_session(page)
    assert second != first
    expect(page.locator('[data-testid="message"]')).to_have_count(0)
    sessions = page.get_by_test_id("sessions").locator("li")
    expect(sessions).to_have_count(2)
    page.get_by_test_id("sessions").locator(f'li[data-id="{first}"]').click()
    expect(page.locator(ASSISTANT)).to_have_text("Answer in the first session.")
    # a session that is not live opens from its file
    served.http.delete(f"/api/sessions/{first}")
    page.reload()
    expect(page.get_by_test_id("sessions").locator(f'li[data-id="{first}"]')).to_have_count(1)
    page.get_by_test_id("sessions").locator(f'li[data-id="{first}"]').click()
    expect(page.locator(ASSISTANT)).to_have_text("Answer in the first session.")


GREETER = '''
from pi_core import hookimpl
from pi_core.protocol.commands import Command


async def greet(args, ctx):
    colour = await ctx.ui.select("Favourite colour?", ["red", "green"])
    name = await ctx.ui.input("Your name?", "type a name")
    ctx.ui.notify(f"Hello {name}, who likes {colour}")


@hookimpl
def register_commands(ctx):
    return [Command(name="greet", description="Greet someone", handler=greet)]
'''


@pytest.fixture
def greeter(pi):
    folder = pi.cwd / ".pi" / "extensions"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "greeter.py").write_text(GREETER)
    pi.trust_project()  # a project plugin loads only in a trusted project


def test_a_plugins_select_and_input_appear_as_dialogs(greeter, pages, width):
    from playwright.sync_api import expect

    page = pages.open(width)

    _new_session(page)
    page.get_by_test_id("prompt").fill("/greet")
    page.get_by_test_id("prompt").press("Enter")
    dialog = page.get_by_test_id("dialog")
    expect(dialog.locator("h2")).to_have_text("Favourite colour?")
    dialog.get_by_text("green").click()
    expect(dialog.locator("h2")).to_have_text("Your name?")
    page.get_by_test_id("dialog-input").fill("Ada")
    page.get_by_test_id("dialog-ok").click()
    expect(page.locator(".toast")).to_have_text("Hello Ada, who likes green")
