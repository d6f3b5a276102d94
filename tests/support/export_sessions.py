"""Sessions built for the export tests (tests/export): hostile text, branches."""

from __future__ import annotations

from pathlib import Path

from pi_core.protocol.messages import (
    AssistantMessage,
    BashExecutionMessage,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from pi_core.session import Session

# Everything that could end an element, open a script, add an attribute or confuse a parser.
EVIL = ('</script><script>document.body.dataset.pwned = "script"</script>'
        '<img src=x onerror="document.body.dataset.pwned = \'img\'"><!-- "quoted" & \'single\' '
        '&amp; ]]> </style></textarea></title><b>bold</b>')
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def assistant(*content, stop_reason: str = "stop", error: str | None = None) -> AssistantMessage:
    return AssistantMessage(content=list(content), api="openai-completions", provider="fake",
                            model="fake-model", usage=Usage(input=10, output=5),
                            stop_reason=stop_reason, error_message=error)


def hostile_session(directory: Path) -> Session:
    """A session holding :data:`EVIL` in every place a session can hold text."""
    session = Session.create("/work/" + EVIL, directory)
    session.append_model_change("fake" + EVIL, "model" + EVIL)
    session.append_message(UserMessage(content=[
        TextContent("user says " + EVIL), ImageContent(data=PIXEL, mime_type="image/png")]))
    session.append_message(assistant(
        ThinkingContent("thinking " + EVIL), TextContent("assistant says " + EVIL),
        ToolCall(id="call" + EVIL, name="bash", arguments={"command": "echo " + EVIL}),
        ToolCall(id="call2", name="tool" + EVIL, arguments={"key" + EVIL: EVIL}),
        stop_reason="toolUse"))
    session.append_message(ToolResultMessage(tool_call_id="call" + EVIL, tool_name="bash" + EVIL,
                                             content=[TextContent("result " + EVIL)]))
    session.append_message(ToolResultMessage(
        tool_call_id="call2", tool_name="tool", is_error=True,
        content=[ImageContent(data=PIXEL + EVIL, mime_type='image/png" onerror="alert(1)')]))
    session.append_message(BashExecutionMessage(command="ls " + EVIL, output="out " + EVIL,
                                                exit_code=1))
    errored = session.append_message(assistant(stop_reason="error", error="boom " + EVIL))
    session.append_label(errored.id, "label" + EVIL)
    session.append_session_info("name" + EVIL)
    session.append_custom("state" + EVIL, {"data": EVIL})
    session.append_custom_message("note" + EVIL, "custom says " + EVIL)
    session.append_compaction("summary " + EVIL, errored.id, 1234)
    session.branch_with_summary(errored.id, "branch summary " + EVIL)
    return session


def branched_session(directory: Path) -> Session:
    """Two branches after the first answer; the second one is current."""
    session = Session.create("/work/project", directory)
    session.append_message(UserMessage(content="first question"))
    answer = session.append_message(assistant(TextContent("first answer")))
    session.append_message(UserMessage(content="left branch question"))
    session.append_message(assistant(TextContent("left branch answer")))
    session.branch(answer.id)
    session.append_message(UserMessage(content="right branch question"))
    session.append_message(assistant(TextContent("right branch answer")))
    return session


MARKDOWN_ANSWER = """## Plan

1. Read **the config**
2. Fix `load()`

| file | change |
|---|---|
| a.py | new |

```python
def load(path):
    return open(path).read()
```

See [the docs](https://example.com/docs), not [this](javascript:alert(1)), ![a chart](https://example.com/x.png).
<span onclick="alert(1)">raw html</span>
"""


def markdown_session(directory: Path) -> Session:
    """A question answered in Markdown (heading, list, table, code, links, raw HTML), a
    labelled follow-up, a tool call and its result, and a model change."""
    session = Session.create("/work", directory)
    session.append_message(UserMessage(content=[TextContent("How do I fix the **loader**?")]))
    session.append_message(assistant(TextContent(MARKDOWN_ANSWER)))
    session.append_model_change("local", "other-model")
    follow = session.append_message(UserMessage(content=[TextContent("And the tests for zebra-striping?")]))
    session.append_message(assistant(ToolCall(id="call-1", name="bash", arguments={"command": "pytest"})))
    session.append_message(ToolResultMessage(tool_call_id="call-1", tool_name="bash",
                                             content=[TextContent("3 passed")]))
    session.append_message(assistant(TextContent("All three tests pass.")))
    session.append_label(follow.id, "tests")
    return session
