"""Take docs/serve.png and docs/serve-phone.png: the page of a real ``pi serve`` in
headless Chromium at 1280 and 375 px, after a short conversation with the scripted LLM
server (a tool call, Markdown with a table and code, an SVG artifact and a PDF the answer
links to, open in the document viewer; on the phone, the session's tree).

Run: python tests/serve/make_screenshot.py   (from the repository's root)
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from support.cli import PiRunner  # noqa: E402
from support.llm_server import LlmServer, Reply  # noqa: E402
from support.office_documents import pdf  # noqa: E402

ANSWER = """The project has **two** Python files. Here is a small chart of their sizes:

```svg
<svg xmlns="http://www.w3.org/2000/svg" width="320" height="140" font-family="sans-serif">
  <rect x="20" y="20" width="220" height="36" fill="#7aa2f7"/><text x="250" y="44">app.py</text>
  <rect x="20" y="76" width="120" height="36" fill="#9ece6a"/><text x="150" y="100">util.py</text>
</svg>
```

| file | lines | role |
|------|------:|------|
| `app.py` | 40 | the entry point |
| `util.py` | 20 | the helpers |

```python
def helper():
    return 1
```

The details are in [the summary report](report.pdf).
"""


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, LlmServer() as server:
        pi = PiRunner(Path(tmp), server)
        (pi.cwd / "app.py").write_text("print('hello')\n" * 40)
        (pi.cwd / "util.py").write_text("def helper():\n    return 1\n" * 10)
        (pi.cwd / "report.pdf").write_bytes(pdf(["Project summary", "app.py: 40 lines, the entry point",
                                                 "util.py: 20 lines, the helpers"]))
        server.push(Reply(thinking="The user wants an overview; list the files first.",
                          text="Let me look at the files.", tool_calls=[("bash", {"command": "wc -l *.py"})],
                          usage={"input": 1830, "output": 96}),
                    Reply(text=ANSWER, usage={"input": 2410, "output": 310}))
        served = subprocess.Popen([sys.executable, "-m", "pi_plugins.cli", "serve", "--port", "0"],
                                  cwd=pi.cwd, env={**pi.env, "PI_OFFLINE": "1"}, text=True,
                                  stdout=subprocess.PIPE)
        url = served.stdout.readline().split(" ", 2)[2].strip()
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=["--no-sandbox"])
                page = browser.new_page(viewport={"width": 1280, "height": 760})
                page.goto(url)
                page.get_by_test_id("new-session").click()
                page.wait_for_function("() => document.getElementById('status').textContent === 'ready'")
                page.get_by_test_id("prompt").fill("What is in this project?")
                page.get_by_test_id("prompt").press("Enter")
                page.get_by_test_id("artifact-open").first.click()
                page.frame_locator('[data-testid="artifact"]').locator("svg").wait_for()
                page.get_by_test_id("document-link").first.click()
                page.frame_locator('[data-testid="artifact"]').locator(".textLayer").first.wait_for()
                page.wait_for_timeout(500)  # the page drawn on its canvas
                page.get_by_test_id("prompt").fill("Now add a test for util.helper")
                page.screenshot(path=str(ROOT / "docs" / "serve.png"))
                phone = browser.new_page(viewport={"width": 375, "height": 740})
                phone.goto(url)
                phone.locator("table").wait_for()
                phone.get_by_test_id("open-tree").click()
                phone.locator(".tree li.leaf").wait_for()
                phone.screenshot(path=str(ROOT / "docs" / "serve-phone.png"))
                browser.close()
        finally:
            served.terminate()
            served.wait(30)


if __name__ == "__main__":
    os.chdir(ROOT)
    main()
