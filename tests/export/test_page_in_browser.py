"""Exported pages in a real headless Chromium: what a reader sees, and what clicking does.

Visibility is the browser's own (``checkVisibility()``: not hidden, not in a closed
``<details>``), so these tests see what a person would, not just what the HTML holds.
"""

from __future__ import annotations

import json
import time

import pytest

from pi_plugins.export_html import export_html
from support.export_sessions import EVIL, hostile_session, markdown_session
from support.sessions import fixture

pytestmark = pytest.mark.process  # starts real processes (see tests/conftest.py)

SHOWN_ENTRIES = """Array.from(document.querySelectorAll('#entries > .entry'))
    .filter(e => e.checkVisibility()).map(e => e.dataset.id)"""
# The text of the shown entries (not innerText: it leaves out entries the browser has
# not laid out yet, as those far below the screen are skipped until scrolled to).
SHOWN_TEXT = """Array.from(document.querySelectorAll('#entries > .entry, #entries > .fork'))
    .filter(e => e.checkVisibility()).map(e => e.textContent).join('\\n')"""
THINKING_SHOWN = """Array.from(document.querySelectorAll('details.thinking .text'))
    .filter(e => e.checkVisibility()).length"""

BRANCH_A = ["7abf0cd7", "6585ccae", "c00fda60", "d4f8a7bf", "8e47f7a3", "23d502f3"]
BRANCH_B = ["89f45951", "37d4d7aa", "51c78225", "26cd89cd", "cd401ed1", "814cde99"]
TRUNK = ["2e28a669", "c3d5d6f4", "0030208a", "b12946ee"]


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pages")
    return {
        "tree": export_html(fixture("tree-branch.jsonl"), folder / "tree.html").resolve().as_uri(),
        "thinking": export_html(fixture("tools-anthropic-thinking.jsonl"),
                                folder / "thinking.html").resolve().as_uri(),
        "evil": export_html(hostile_session(folder / "s"), folder / "evil.html").resolve().as_uri(),
        "markdown": export_html(markdown_session(folder / "m"), folder / "markdown.html").resolve().as_uri(),
    }


@pytest.fixture
def page(browser, pages):
    """Open a page by name (with an optional query) and check it ran without errors."""
    opened = []

    def open_page(name: str, query: str = "") -> None:
        browser.open(pages[name] + query)
        opened.append(name)
        assert browser.evaluate("document.documentElement.className") == "js"  # script ran

    yield open_page
    assert browser.page_errors() == []


def test_branched_session_opens_on_its_current_branch_and_switches_at_the_fork(browser, page):
    page("tree")
    assert browser.evaluate(SHOWN_ENTRIES) == TRUNK + BRANCH_A
    text = browser.evaluate(SHOWN_TEXT)
    assert "Continuing on branch A." in text and "Approach B done" not in text
    assert "Try approach A: create a.txt" in text  # the fork's list names both branches
    assert "Try approach B instead: create b.txt" in text

    browser.evaluate("document.querySelector('.fork a[data-branch=\"89f45951\"]').click()")
    assert browser.evaluate(SHOWN_ENTRIES) == TRUNK + BRANCH_B
    text = browser.evaluate(SHOWN_TEXT)
    assert "Approach B done: created b.txt." in text and "Continuing on branch A." not in text
    assert "approach-b" in text and "Abandoned in favour of approach B." in text  # label, summary
    assert browser.evaluate("document.querySelector('.fork a.selected').dataset.branch") == "89f45951"


def test_all_branches_show_together_on_request(browser, page):
    page("tree", "?view=all")
    assert browser.evaluate(SHOWN_ENTRIES) == TRUNK + BRANCH_A + BRANCH_B
    heads = browser.evaluate("Array.from(document.querySelectorAll('.branch-head'))"
                             ".filter(h => h.checkVisibility()).map(h => h.innerText)")
    assert heads == ["Branch 1 of 2: Try approach A: create a.txt",
                     "Branch 2 of 2: approach-b Try approach B instead: create b.txt"]

    browser.evaluate("document.querySelector('button[data-action=branches]').click()")
    assert browser.evaluate(SHOWN_ENTRIES) == TRUNK + BRANCH_A
    browser.evaluate("document.querySelector('button[data-action=branches]').click()")
    assert browser.evaluate(SHOWN_ENTRIES) == TRUNK + BRANCH_A + BRANCH_B


def test_a_link_may_name_the_branch_to_show(browser, page):
    page("tree", "?leafId=814cde99")
    assert browser.evaluate(SHOWN_ENTRIES) == TRUNK + BRANCH_B
    page("tree", "?targetId=c00fda60")
    assert browser.evaluate(SHOWN_ENTRIES) == TRUNK + BRANCH_A


def test_the_sidebar_tree_lists_every_entry_and_opens_its_branch(browser, page):
    page("tree")
    listed = browser.evaluate("Array.from(document.querySelectorAll('#tree a')).map(a => a.dataset.id)")
    assert listed == TRUNK + BRANCH_A + BRANCH_B
    lines = browser.evaluate("Array.from(document.querySelectorAll('#tree a')).map(a => a.textContent)")
    assert lines[4].startswith("├─ user: Try approach A") and lines[10].startswith("└─ approach-b")
    assert browser.evaluate("document.querySelector('#tree li.selected a').dataset.id") == "23d502f3"

    browser.evaluate("document.querySelector('#tree a[data-id=\"51c78225\"]').click()")
    assert browser.evaluate(SHOWN_ENTRIES) == TRUNK + BRANCH_B
    on_path = browser.evaluate("Array.from(document.querySelectorAll('#tree li.on-path a'))"
                               ".map(a => a.dataset.id)")
    assert on_path == TRUNK + BRANCH_B


def test_thinking_is_collapsed_until_asked_for(browser, page):
    page("thinking")
    thinking = fixture("tools-anthropic-thinking.jsonl").read_text()
    first = next(b["thinking"] for line in thinking.splitlines()
                 for b in (json.loads(line).get("message") or {}).get("content", [])
                 if isinstance(b, dict) and b.get("type") == "thinking")
    assert browser.evaluate("document.querySelectorAll('details.thinking').length") == 3
    assert browser.evaluate("document.querySelectorAll('details.thinking[open]').length") == 0
    assert browser.evaluate(THINKING_SHOWN) == 0
    assert first.strip() in browser.evaluate(SHOWN_TEXT)  # in the page, folded away

    browser.evaluate("document.querySelector('button[data-action=thinking]').click()")
    assert browser.evaluate("document.querySelectorAll('details.thinking[open]').length") == 3
    assert browser.evaluate(THINKING_SHOWN) == 3


def test_hostile_text_shows_as_text_and_runs_nothing(browser, page):
    page("evil")
    assert browser.evaluate("document.body.dataset.pwned === undefined")
    assert browser.evaluate("document.scripts.length") == 1
    assert browser.evaluate("document.querySelectorAll('#entries b, #entries textarea').length") == 0
    assert browser.evaluate("document.images.length") == 1
    assert browser.evaluate("document.title") == f"pi session: name{EVIL}"
    text = browser.evaluate("document.getElementById('entries').textContent")
    for prefix in ("result ", "custom says ", "boom "):
        assert prefix + EVIL in text
    # user and assistant text is Markdown: every tag stays text; only the written "&amp;"
    # reads as "&", as Markdown (and pi's page) reads an entity
    assert browser.evaluate("document.querySelectorAll('.text.md.rendered').length") >= 2
    for prefix in ("user says ", "assistant says "):
        assert prefix + EVIL.replace("&amp;", "&") in text


def test_markdown_and_code_are_rendered_and_nothing_in_them_runs_or_loads(browser, page):
    page("markdown")
    answer = "document.querySelectorAll('.entry.assistant .text.md')[0]"
    deadline = time.monotonic() + 10  # the page renders its Markdown after the load event
    while not browser.evaluate(f"{answer}.classList.contains('rendered')") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert browser.evaluate(f"{answer}.classList.contains('rendered')")
    assert browser.evaluate(f"{answer}.querySelector('h2').textContent") == "Plan"
    assert browser.evaluate(f"Array.from({answer}.querySelectorAll('ol li')).map(l => l.textContent)") == [
        "Read the config", "Fix load()"]
    assert browser.evaluate(f"Array.from({answer}.querySelectorAll('td')).map(c => c.textContent)") == [
        "a.py", "new"]
    code = f"{answer}.querySelector('pre.code code.language-python')"
    assert browser.evaluate(f"{code}.textContent").startswith("def load(path):")
    assert browser.evaluate(f"{code}.querySelector('.hljs-keyword').textContent") == "def"
    links = browser.evaluate(f"Array.from({answer}.querySelectorAll('a')).map(a => a.getAttribute('href'))")
    assert links == ["https://example.com/docs"]  # the javascript: link is left as its text
    assert browser.evaluate("document.images.length") == 0  # the image is named, not loaded
    assert "[image: a chart]" in browser.evaluate(f"{answer}.textContent")
    assert browser.evaluate(f"{answer}.querySelectorAll('span[onclick]').length") == 0
    assert '<span onclick="alert(1)">raw html</span>' in browser.evaluate(f"{answer}.textContent")
    user = "document.querySelector('.entry.user .text.md')"
    assert browser.evaluate(f"{user}.querySelector('strong').textContent") == "loader"


TREE_SHOWN = """Array.from(document.querySelectorAll('#tree li'))
    .filter(li => !li.hidden).map(li => li.querySelector('a').textContent.replace(/^[├└│─ ]+/, ''))"""


def test_the_tree_filters_and_searches_as_pis_page(browser, page):
    page("markdown")
    # default: no settings entries (the model change) and no answer of tool calls alone; the
    # current leaf (here the label entry) always shows, as in pi; "tests" is the label
    shown = browser.evaluate(TREE_SHOWN)
    assert [line.split(":")[0] for line in shown] == ["user", "assistant", "testsuser", "bash result", "assistant",
                                                      "label"]
    assert browser.evaluate("document.getElementById('tree-status').textContent") == "6 / 8 entries"

    def choose(mode: str) -> list[str]:
        browser.evaluate(f"document.querySelector('#tree-filters button[data-filter=\"{mode}\"]').click()")
        return browser.evaluate(TREE_SHOWN)

    assert [line.split(":")[0] for line in choose("no-tools")] == ["user", "assistant", "testsuser", "assistant", "label"]
    assert [line.split(":")[0] for line in choose("user-only")] == ["user", "testsuser", "label"]
    assert [line.split(":")[0] for line in choose("labeled-only")] == ["testsuser", "label"]
    assert len(choose("all")) == 7  # all but the answer of a tool call alone
    choose("default")
    search = ("(box => {{ box.value = {!r}; box.dispatchEvent(new Event('input')); }})"
              "(document.getElementById('tree-search'))")
    browser.evaluate(search.format("ZEBRA striping"))
    assert [line.split(":")[0] for line in browser.evaluate(TREE_SHOWN)] == ["testsuser", "label"]
    browser.evaluate(search.format("open(path)"))  # words from inside an answer's code
    assert [line.split(":")[0] for line in browser.evaluate(TREE_SHOWN)] == ["assistant", "label"]


def test_without_scripts_every_branch_is_readable(browser, pages):
    browser.send("Emulation.setScriptExecutionDisabled", {"value": True}, session=browser.session)
    try:
        browser.open(pages["tree"])
        assert browser.evaluate("document.documentElement.className") == ""
        assert browser.evaluate(SHOWN_ENTRIES) == TRUNK + BRANCH_A + BRANCH_B
        assert browser.evaluate("document.getElementById('toolbar').checkVisibility()") is False
    finally:
        browser.send("Emulation.setScriptExecutionDisabled", {"value": False}, session=browser.session)


TREE_LINES = """Array.from(document.querySelectorAll('#tree li'))
    .filter(li => !li.hidden).map(li => li.querySelector('a').textContent)"""


def test_the_filtered_tree_draws_its_connectors_again_as_pis_page(browser, page):
    """pi's page redraws the tree for what a filter shows: an entry hangs under its nearest
    shown ancestor, a fork draws rails for its shown branches only, and shown roots stand
    side by side without connectors; nothing is left hanging from a hidden line."""
    page("tree")
    everything = browser.evaluate(TREE_LINES)

    def choose(mode: str) -> list[str]:
        browser.evaluate(f"document.querySelector('#tree-filters button[data-filter=\"{mode}\"]').click()")
        return browser.evaluate(TREE_LINES)

    assert choose("user-only") == [
        "user: Question one: what is in this directory?",
        "├─ user: Try approach A: create a.txt",  # the fork (an answer) is hidden: its question forks
        "│  user: Back on branch A: continue",
        "│  assistant: Continuing on branch A. ●",
        "└─ user: Try approach B instead: create b.txt",
    ]
    assert choose("labeled-only") == [  # two roots now: no rails at all
        "assistant: Continuing on branch A. ●",
        "approach-bbranch summary: The user explored a different conversation branch before returning here. "
        "Summary of that …",
    ]
    assert choose("default") == everything  # as page.py drew it
