"""A tool carries its own presentation and file effects: the chat, the tree view, the
HTML export, compaction's file lists and the system prompt ask the tool, not its name."""

import asyncio

from pi_core import Tool, tool
from pi_plugins.compaction.plan import FileOps
from pi_core.protocol.messages import AssistantMessage, ToolCall
from pi_plugins.interactive.tool_views import ToolState, call_title
from pi_plugins.interactive.tree_view import tool_call_text
from pi_plugins.system_prompt import base_prompt
from pi_plugins.tools import builtin_tools


class FetchTool(Tool):
    """A subclass giving its presentation as methods."""

    def summarize(self, args):
        return f"fetch {args.get('url')}"

    def files(self, args):
        return {"modified": [args["save_as"]]} if args.get("save_as") else {}


my_read = Tool(name="read", description="Read from the archive.",
               summarize=lambda args: f"archive {args.get('key')}",
               files=lambda args: {"read": [f"archive:{args.get('key')}"]})


def test_a_replaced_read_presents_itself_in_the_chat_and_the_tree():
    state = ToolState("c1", "read", {"key": "k42"}, tool=my_read)
    assert call_title(state).plain == "archive k42"
    assert tool_call_text("read", {"key": "k42"}, {"read": my_read}) == "[archive k42]"


def test_a_new_tool_with_methods_presents_itself():
    fetch = FetchTool(name="fetch")
    assert call_title(ToolState("c1", "fetch", {"url": "http://x"}, tool=fetch)).plain == "fetch http://x"
    assert fetch.files({"save_as": "page.html"}) == {"modified": ["page.html"]}


def test_a_tool_without_a_summary_gets_a_generic_line_not_a_built_in_look():
    plain = Tool(name="lookup")
    assert plain.summarize({"q": "x"}) == 'lookup {"q": "x"}'
    assert plain.files({"q": "x"}) == {}


def test_the_built_in_tools_say_what_they_do_and_touch():
    tools = {t.name: t for t in builtin_tools()}
    assert tools["bash"].summarize({"command": "ls -la"}) == "$ ls -la"
    assert tools["read"].summarize({"path": "a.py", "offset": 10, "limit": 5}) == "read a.py:10-14"
    assert tools["grep"].summarize({"pattern": "todo", "path": "src"}) == "grep /todo/ in src"
    assert tools["read"].files({"path": "a.py"}) == {"read": ["a.py"]}
    assert tools["edit"].files({"path": "b.py", "edits": []}) == {"modified": ["b.py"]}
    assert tools["bash"].files({"command": "rm x"}) == {}


def test_compaction_file_lists_come_from_the_tools_files():
    ops = FileOps(tools={"read": my_read, "fetch": FetchTool(name="fetch")})
    ops.add_from(AssistantMessage(content=[
        ToolCall(id="1", name="read", arguments={"key": "k1"}),
        ToolCall(id="2", name="fetch", arguments={"url": "u", "save_as": "out.html"}),
        ToolCall(id="3", name="gone", arguments={"path": "x"})]))
    assert ops.lists() == (["archive:k1"], ["out.html"])


def test_the_html_export_heads_a_call_with_its_tools_summary(tmp_path):
    from pi_core.protocol.messages import TextContent, UserMessage
    from pi_core.session import Session
    from pi_plugins.export_html import export_html

    session = Session.create(tmp_path, tmp_path / "sessions")
    session.append_message(UserMessage(content=[TextContent("get it")]))
    session.append_message(AssistantMessage(content=[ToolCall(id="1", name="read", arguments={"key": "k9"})]))
    page = export_html(session, tmp_path / "out.html", tools=[my_read]).read_text()
    assert "archive k9" in page


def test_a_tool_adds_its_snippet_and_guidelines_to_the_system_prompt():
    @tool(prompt_snippet="look things up in the team wiki",
          prompt_guidelines=["Cite the wiki page you used."])
    def wiki(args, run):
        """Search the wiki. Long description that the model reads in the schema."""

    prompt = base_prompt([*builtin_tools()[:1], wiki])
    assert "- wiki: look things up in the team wiki" in prompt
    assert "- Cite the wiki page you used." in prompt.split("How to work:")[1]
