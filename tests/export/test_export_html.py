"""The HTML export (``pi --export FILE [OUT]``): what the page holds, how it is escaped,
where it is written, and what happens with bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.session import Session
from pi_plugins.export_assets import page_css, page_js
from pi_plugins.export_html import ExportError, default_output_name, export_html, render_page
from support.export_sessions import EVIL, assistant, branched_session, hostile_session
from support.sessions import fixture


class Page(HTMLParser):
    """A parsed page: its elements (tag, attributes) and its text, as a browser reads them."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.texts: list[str] = []
        self.feed(html)
        self.close()
        self.text = "".join(self.texts)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.texts.append(data)

    def tags(self, name: str) -> list[dict]:
        return [attrs for tag, attrs in self.elements if tag == name]

    def by_class(self, name: str) -> list[dict]:
        return [attrs for _, attrs in self.elements if name in (attrs.get("class") or "").split()]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def run_pi_export(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pi_plugins.cli", "--export", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "HOME": str(cwd)})


# ---------------------------------------------------------------- what the page holds


def test_every_fixture_exports_every_entry_and_message_text(fixture_session, tmp_path):
    out = export_html(fixture_session, tmp_path / "page.html")

    assert out == tmp_path / "page.html"
    page = Page(out.read_text(encoding="utf-8"))
    lines = read_jsonl(fixture_session)
    entry_ids = [line["id"] for line in lines[1:]]
    assert [a["data-id"] for a in page.by_class("entry")] != []
    assert sorted(a["data-id"] for a in page.by_class("entry")) == sorted(entry_ids)
    assert sorted(a["data-id"] for a in page.tags("a") if "data-id" in a) == sorted(entry_ids)
    for line in lines[1:]:
        message = line.get("message") or {}
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
        for block in blocks:
            for key in ("text", "thinking"):
                if block.get(key, "").strip():
                    assert block[key] in page.text, (line["id"], block[key])
    assert lines[0]["id"] in page.text


def test_branched_fixture_shows_both_branches_the_label_and_the_branch_summary(tmp_path):
    source = fixture("tree-branch.jsonl")
    page = Page(export_html(source, tmp_path / "tree.html").read_text())
    lines = {line["id"]: line for line in read_jsonl(source)[1:]}

    forks = page.by_class("fork")
    assert [f["data-fork"] for f in forks] == ["b12946ee"]
    branches = [a["data-branch"] for a in page.tags("a") if "data-branch" in a]
    assert branches == ["7abf0cd7", "89f45951"]  # branch A (older), then branch B
    heads = page.by_class("branch-head")
    assert [h["data-branch"] for h in heads] == branches
    assert "Branch 1 of 2: Try approach A: create a.txt" in page.text
    assert "Branch 2 of 2: approach-b Try approach B instead: create b.txt" in page.text
    for text in ("Approach A done: created a.txt.", "Continuing on branch A.",
                 "Approach B done: created b.txt.", "Try approach B instead: create b.txt"):
        assert text in page.text
    assert lines["89f45951"]["summary"] in page.text
    labelled = [a for a in page.by_class("label")]
    assert labelled and "approach-b" in page.text
    # every entry hangs under its parent in the page, whichever branch it is on
    parents = {a["data-id"]: a["data-parent"] for a in page.by_class("entry")}
    assert parents == {i: (line["parentId"] or "") for i, line in lines.items()}
    assert page.tags("body")[0]["data-leaf"] == "23d502f3"  # the file's last entry, as in pi


def test_entries_follow_depth_first_order_with_the_older_branch_first(tmp_path):
    page = Page(export_html(fixture("tree-branch.jsonl"), tmp_path / "p.html").read_text())
    order = [a["data-id"] for a in page.by_class("entry")]
    assert order.index("23d502f3") < order.index("89f45951")  # branch A's end before B starts
    assert order.index("89f45951") < order.index("814cde99")


def test_thinking_is_collapsed_and_tool_calls_sit_with_their_results(tmp_path):
    source = fixture("tools-anthropic-thinking.jsonl")
    html = export_html(source, tmp_path / "t.html").read_text()
    page = Page(html)

    thinking = page.by_class("thinking")
    assert thinking and all(t.get("open") is None for t in thinking)
    lines = read_jsonl(source)
    calls = [b for line in lines[1:] if line["type"] == "message"
             for b in line["message"].get("content", []) if isinstance(b, dict) and b.get("type") == "toolCall"]
    assert sorted(a["data-call"] for a in page.by_class("tool-call")) == sorted(c["id"] for c in calls)
    results = [line for line in lines if line.get("message", {}).get("role") == "toolResult"]
    assert len(page.by_class("tool-result")) == len(results)
    for result in results:
        assert result["message"]["content"][0]["text"].rstrip("\n") in page.text


def test_compaction_and_shell_commands_are_shown(tmp_path):
    source = fixture("rpc-compact-fork.jsonl")
    page = Page(export_html(source, tmp_path / "c.html").read_text())
    lines = read_jsonl(source)
    compaction = next(line for line in lines if line["type"] == "compaction")
    bash = next(line["message"] for line in lines if line.get("message", {}).get("role") == "bashExecution")

    assert compaction["summary"] in page.text
    assert page.by_class("compaction") and page.by_class("bash")
    assert "$ " + bash["command"] in page.text

    html = export_html(source, tmp_path / "c.html").read_text()
    assert "<title>pi session: rpc-demo</title>" in html  # the session's name


def test_long_tool_output_folds_after_a_preview(tmp_path):
    session = Session.create("/work", tmp_path)
    session.append_message(UserMessage(content="count"))
    session.append_message(assistant(TextContent("counting")))
    from pi_core.protocol.messages import ToolResultMessage

    session.append_message(ToolResultMessage(tool_call_id="c", tool_name="bash", content=[
        TextContent("\n".join(f"line {i}" for i in range(100)))]))
    page = Page(render_page(session))

    more = page.by_class("more")
    assert len(more) == 1 and more[0].get("open") is None
    assert "88 more lines of output" in page.text
    assert "line 0" in page.text and "line 99" in page.text


def test_header_totals_every_branch(tmp_path):
    session = branched_session(tmp_path)
    page = Page(render_page(session))

    assert "2 user" not in page.text  # three user messages over both branches
    assert "3 user, 3 assistant" in page.text
    assert "↑30 ↓15" in page.text  # 10 in / 5 out per answer, three answers
    assert "6 (2 branches)" in page.text


def test_assets_hold_no_url_and_the_page_loads_nothing(tmp_path):
    from importlib.resources import files

    own_js = files("pi_plugins.export_assets").joinpath("page.js").read_text()
    assert own_js in page_js()  # after the vendored libraries (their comments name their sites)
    assert "http:" not in page_css() + own_js and "https:" not in page_css() + own_js
    page = Page(export_html(fixture("tree-branch.jsonl"), tmp_path / "p.html").read_text())
    assert all(not a.get("src") for a in page.tags("script"))
    assert not page.tags("link") and not page.tags("iframe")
    links = [a["href"] for a in page.tags("a")]
    assert links and all(href.startswith("#") for href in links)
    policy = page.tags("meta")[2]["content"]
    assert policy.startswith("default-src 'none'; img-src data:;")
    assert "script-src 'sha256-" in policy and "unsafe-inline" not in policy.split("script-src")[1]


def test_deeply_nested_forks_render_without_recursion(tmp_path):
    """1,500 forks in a row (each answer retried once), past the recursion limit: the walk is
    iterative."""
    session = Session.in_memory("/work")
    for i in range(1500):
        question = session.append_message(UserMessage(content=f"q{i}"))
        session.append_message(assistant(TextContent(f"abandoned {i}")))
        session.branch(question.id)
        session.append_message(assistant(TextContent(f"kept {i}")))
    html = render_page(session)
    assert html.count('class="fork"') == 1500
    assert "abandoned 1499" in html and "kept 1499" in html


# ---------------------------------------------------------------- escaping


def test_hostile_text_everywhere_stays_text(tmp_path):
    session = hostile_session(tmp_path)
    html = export_html(session, tmp_path / "evil.html").read_text(encoding="utf-8")
    page = Page(html)

    assert len(page.tags("script")) == 1 and len(page.tags("style")) == 2  # one for no-script
    assert page.tags("b") == []  # no element from the session's text
    assert not [(tag, name) for tag, attrs in page.elements for name in attrs if name.startswith("on")]
    images = page.tags("img")
    assert len(images) == 1 and images[0]["src"].startswith("data:image/png;base64,")
    assert '[image of type image/png" onerror="alert(1), not shown]' in page.text
    assert html.count("</script>") == 1
    for text in ("user says ", "assistant says ", "thinking ", "echo ", "result ", "out ",
                 "boom ", "label", "name", "custom says ", "summary ", "branch summary ", "note"):
        assert text + EVIL in page.text, text
    # a tool's arguments show as JSON (names and values as text)
    assert json.dumps({"key" + EVIL: EVIL}, indent=2, ensure_ascii=False) in page.text
    assert page.tags("title") == [{}] and f"pi session: name{EVIL}" in page.text


def test_text_that_cannot_be_utf8_is_replaced_not_fatal(tmp_path):
    session = Session.in_memory("/work")
    session.append_message(UserMessage(content="broken \ud800 surrogate"))
    out = export_html(session, tmp_path / "s.html")
    assert "broken ? surrogate" in out.read_text(encoding="utf-8")


# ---------------------------------------------------------------- where the page goes


def test_default_output_is_pis_name_in_the_current_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = export_html(fixture("chat-openai.jsonl"))
    assert out == Path("pi-session-chat-openai.html")
    assert (tmp_path / "pi-session-chat-openai.html").is_file()
    assert default_output_name("/x/2026-01-01T00-00-00-000Z_abc.jsonl") == \
           "pi-session-2026-01-01T00-00-00-000Z_abc.html"
    assert default_output_name("/x/notes.txt") == "pi-session-notes.txt.html"


def test_an_open_session_exports_and_stays_usable(tmp_path, monkeypatch):
    """RPC's export_html passes the live session: it is read, not closed."""
    monkeypatch.chdir(tmp_path)
    session = branched_session(tmp_path / "sessions")
    out = export_html(session)
    assert out == Path(f"pi-session-{session.file.name[:-len('.jsonl')]}.html")
    assert "right branch answer" in out.read_text()
    session.append_message(UserMessage(content="still writable"))
    assert "still writable" in session.file.read_text()
    memory = Session.in_memory("/work")
    memory.append_message(UserMessage(content="only in memory"))
    assert export_html(memory) == Path(f"pi-session-{memory.id}.html")


def test_an_existing_page_is_replaced_whole_and_no_temporary_file_stays(tmp_path):
    target = tmp_path / "page.html"
    target.write_text("old page")
    export_html(fixture("chat-openai.jsonl"), target)
    assert "old page" not in target.read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html"]


@pytest.mark.process
def test_cli_exports_and_says_where(tmp_path):
    done = run_pi_export(str(fixture("tree-branch.jsonl")), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Exported to: pi-session-tree-branch.html"
    assert (tmp_path / "pi-session-tree-branch.html").is_file()

    (tmp_path / "out").mkdir()
    done = run_pi_export(str(fixture("tree-branch.jsonl")), "out/named.html", cwd=tmp_path)
    assert done.returncode == 0 and (tmp_path / "out" / "named.html").is_file()
    assert done.stdout.strip() == "Exported to: out/named.html"


def test_an_output_folder_that_does_not_exist_is_a_clear_error(tmp_path):
    with pytest.raises(ExportError, match="missing/page.html: cannot write the page"):
        export_html(fixture("chat-openai.jsonl"), tmp_path / "missing" / "page.html")


# ---------------------------------------------------------------- bad input


BAD_FILES = {
    "missing": (None, "no such file"),
    "empty": (b"", "the file is empty"),
    "not json": (b"this is not json\n", "only lines that are not JSON; this is not a pi session file"),
    "no header": (b'{"type":"message","id":"abc"}\n', "not a session header"),
}


@pytest.mark.parametrize("case", BAD_FILES)
def test_missing_or_corrupt_file_is_a_clear_error(tmp_path, case):
    content, message = BAD_FILES[case]
    source = tmp_path / "session.jsonl"
    if content is not None:
        source.write_bytes(content)
    with pytest.raises(ExportError, match=message) as raised:
        export_html(source, tmp_path / "out.html")
    assert str(source) in str(raised.value)
    assert not (tmp_path / "out.html").exists()


@pytest.mark.process
@pytest.mark.parametrize("case", ["missing", "not json"])
def test_cli_exits_1_with_the_error_on_stderr(tmp_path, case):
    content, message = BAD_FILES[case]
    source = tmp_path / "session.jsonl"
    if content is not None:
        source.write_bytes(content)
    done = run_pi_export(str(source), "out.html", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("error: ") and message in done.stderr and str(source) in done.stderr
    assert done.stdout == ""
    assert not (tmp_path / "out.html").exists()
    if content is not None:
        assert source.read_bytes() == content  # never changed


def test_a_damaged_line_is_skipped_and_listed_on_the_page(tmp_path):
    source = tmp_path / "damaged.jsonl"
    lines = fixture("chat-openai.jsonl").read_bytes().splitlines(keepends=True)
    source.write_bytes(b"".join(lines[:3] + [b"{not json\n"] + lines[3:]))
    page = Page(export_html(source, tmp_path / "d.html").read_text())
    assert "1 damaged line(s) of the session file were left out" in page.text
    assert "line 4:" in page.text
    assert len(page.by_class("entry")) == len(lines) - 1


ODD_LINES = [  # values of types nobody writes, as a hand-edited file may hold them
    {"type": "message", "id": "0dd00001", "parentId": "3805ce1c", "timestamp": "2026-11-30T04:04:56.564Z",
     "message": {"role": "assistant", "content": [{"type": "text", "text": None},
                 {"type": "toolCall", "id": "x", "name": None, "arguments": "not a dict"}],
                 "api": "a", "provider": None, "model": 7, "usage": {"input": "x", "cost": {"total": "a"}},
                 "stopReason": "stop", "timestamp": 1}},
    {"type": "compaction", "id": "0dd00002", "parentId": "0dd00001", "timestamp": None,
     "summary": None, "firstKeptEntryId": None, "tokensBefore": "many"},
    {"type": "label", "id": "0dd00003", "parentId": "0dd00002", "timestamp": "x",
     "targetId": "0dd00001", "label": 5},
    {"type": "message", "id": "0dd00004", "parentId": "0dd00003", "timestamp": "2026-11-30T04:04:57.000Z",
     "message": {"role": "user", "content": "still readable after them", "timestamp": 2}},
]


def test_entries_with_values_of_unexpected_types_show_as_stored(tmp_path):
    source = tmp_path / "odd.jsonl"
    lines = fixture("chat-openai.jsonl").read_text().splitlines()[:4]
    source.write_text("\n".join(lines + [json.dumps(line) for line in ODD_LINES]) + "\n")
    page = Page(export_html(source, tmp_path / "odd.html").read_text())

    assert len(page.by_class("entry")) == 3 + len(ODD_LINES)
    assert page.text.count("not readable here") == 2  # the assistant message, the compaction
    assert '"text": null' in page.text and '"summary": null' in page.text
    assert "still readable after them" in page.text


def test_exporting_onto_the_session_file_itself_is_refused(tmp_path):
    source = tmp_path / "s.jsonl"
    source.write_bytes(fixture("chat-openai.jsonl").read_bytes())
    before = source.read_bytes()
    with pytest.raises(ExportError, match="the session file itself"):
        export_html(source, source)
    assert source.read_bytes() == before


def test_a_directory_as_source_or_output_is_a_clear_error(tmp_path):
    with pytest.raises(ExportError, match="is a directory, not a session file"):
        export_html(tmp_path, tmp_path / "x.html")
    with pytest.raises(ExportError, match="is a directory; give a file name"):
        export_html(fixture("chat-openai.jsonl"), tmp_path)


def test_a_key_stored_in_an_older_session_is_redacted_from_the_export(tmp_path, monkeypatch):
    monkeypatch.setenv("LEGACY_API_KEY", "sk-legacy-0123456789")
    session = Session.create("/work/project", tmp_path)
    session.append_message(UserMessage(content=[TextContent("my key is sk-legacy-0123456789")]))
    session.append_message(assistant(TextContent("noted: sk-legacy-0123456789")))
    html = export_html(session, tmp_path / "page.html").read_text(encoding="utf-8")
    assert "sk-legacy-0123456789" not in html and "[redacted: LEGACY_API_KEY]" in html
    assert "sk-legacy-0123456789" not in render_page(session)


def test_a_system_message_is_shown_as_the_system_prompt_with_its_sections(tmp_path):
    from pi_core import SystemMessage

    session = Session.create("/work", tmp_path)
    session.append_message(SystemMessage(sections={"preamble": "Be brief.", "cwd": "<cwd>\n/work\n</cwd>"},
                                         tools_added=[{"name": "read", "description": "d", "parameters": {}}]))
    session.append_message(UserMessage(content="hi"))
    page = export_html(session, tmp_path / "p.html").read_text()
    assert "System prompt" in page and "Be brief." in page and "preamble" in page
