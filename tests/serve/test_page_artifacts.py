"""Artifacts in real Chromium at 1280 and 375 px: several per session (HTML, SVG,
Markdown) as tabs, each with its source and a download, each in a sandboxed frame whose
own policy lets it reach nothing; and the page itself runs no inline script."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.llm_server import Reply
from support.serve_page import new_session, send

pytestmark = [pytest.mark.requires("chromium"), pytest.mark.process]

ASSISTANT = '[data-testid="message"][data-role="assistant"]'
THREE = """Three artifacts:

```html
<!doctype html><title>Counter</title>
<p id="out">not run</p>
<script>
  document.getElementById("out").textContent = "ran";
  fetch("/api/health").then(() => { document.title = "reached"; }, () => { document.getElementById("out").textContent = "ran, fetch blocked"; });
</script>
```

```svg
<svg xmlns="http://www.w3.org/2000/svg" width="80" height="40"><rect id="bar" width="60" height="20" fill="teal"/></svg>
```

```markdown
# Plan
- one
- two
```
"""


def test_several_artifacts_open_as_tabs_with_source_and_download(pages, server, width):
    from playwright.sync_api import expect

    page = pages.open(width)
    server.push(Reply(text=THREE))
    new_session(page)
    send(page, "make three")
    opens = page.locator(ASSISTANT).get_by_test_id("artifact-open")
    expect(opens).to_have_count(3)
    frame = page.frame_locator('[data-testid="artifact"]')
    opens.nth(0).click()
    expect(frame.locator("#out")).to_have_text("ran, fetch blocked")  # scripts run; nothing reachable
    pages.shoot(page, f"artifact-html-{width}")
    if width == "phone":
        page.get_by_test_id("artifact-close").click()
    opens.nth(1).click()
    expect(frame.locator("#bar")).to_have_attribute("fill", "teal")
    if width == "phone":
        page.get_by_test_id("artifact-close").click()
    opens.nth(2).click()
    expect(frame.locator("h1")).to_have_text("Plan")
    expect(frame.locator("li")).to_have_text(["one", "two"])
    tabs = page.get_by_test_id("artifact-tab")
    expect(tabs).to_have_text(["Counter", "svg 2", "Plan"])
    tabs.nth(0).click()
    expect(frame.locator("#out")).to_contain_text("ran")
    page.get_by_test_id("artifact-source").click()
    expect(page.get_by_test_id("artifact-code")).to_contain_text('document.getElementById("out")')
    with page.expect_download() as waiting:
        page.get_by_test_id("artifact-download").click()
    assert waiting.value.suggested_filename.endswith(".html")
    assert "<title>Counter</title>" in Path(waiting.value.path()).read_text()
    pages.shoot(page, f"artifact-source-{width}")
    page.get_by_test_id("artifact-close").click()
    expect(page.locator("#artifact-panel")).to_be_hidden()


def test_the_page_runs_no_inline_script_and_the_artifact_frame_has_its_own_policy(pages, served):
    page = pages.open("desktop")
    new_session(page)
    ran = page.evaluate("""() => new Promise((resolve) => {
        const s = document.createElement('script');
        s.textContent = 'window.inlineRan = true';
        document.body.appendChild(s);
        setTimeout(() => resolve(window.inlineRan === true), 100);
    })""")
    assert ran is False
    page_policy = served.http.get("/").headers["content-security-policy"]
    script_src = next(d for d in page_policy.split(";") if d.strip().startswith("script-src"))
    assert script_src.split() == ["script-src", "'self'"]
    frame = served.http.get("/artifact")
    frame_policy = frame.headers["content-security-policy"]
    assert "connect-src 'none'" in frame_policy and "default-src 'none'" in frame_policy
    assert "frame-ancestors 'self'" in frame_policy


def test_an_image_a_tool_read_is_shown_and_opens_as_an_artifact_to_download(pages, server, pi, width):
    import base64
    import json

    from playwright.sync_api import expect

    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
    models = [{"id": "test-model", "input": ["text", "image"]}]
    (pi.agent_dir / "models.json").write_text(json.dumps(server.models_json("local", models=models)))
    (pi.cwd / "dot.png").write_bytes(png)
    server.push(Reply(tool_calls=[("read", {"path": "dot.png"})]), Reply(text="A single dot."))
    page = pages.open(width)
    new_session(page)
    send(page, "look at dot.png")
    expect(page.locator(ASSISTANT).last).to_have_text("A single dot.")
    image = page.get_by_test_id("tool-image")
    expect(image).to_have_count(1)
    assert page.evaluate("document.querySelector('[data-testid=tool-image]').naturalWidth") == 1
    image.click()
    expect(page.frame_locator('[data-testid="artifact"]').locator("img")).to_have_count(1)
    with page.expect_download() as waiting:
        page.get_by_test_id("artifact-download").click()
    assert Path(waiting.value.path()).read_bytes() == png
