"""The transcript a compaction or branch summary sends the model is pi 1.6's
``serializeConversation``, character for character: no thinking, arguments as compact
JSON, text blocks of user and tool-result messages joined without a separator, long tool
results truncated with pi's marker."""

import json
import subprocess

import pytest

from pi_core.protocol.codec import to_json
from pi_core.protocol.messages import (
    AssistantMessage,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from pi_plugins.compaction.summary import serialize

#: Runs pi 1.6's own serializeConversation on the messages given (their JSON as pi keeps it).
_PI16_SERIALIZE = """
const [utils, payload] = process.argv.slice(1);
const { serializeConversation } = await import(utils);
process.stdout.write(serializeConversation(JSON.parse(payload)));
"""

MESSAGES = [
    UserMessage(content=[TextContent("Fix the "), TextContent("parser.")]),
    AssistantMessage(content=[ThinkingContent("The parser is in src/p.ts; maybe ü."), TextContent("Looking."),
                              ToolCall(id="c1", name="edit", arguments={
                                  "path": "src/p.ts", "edits": [{"oldText": "a: 1", "newText": "ü = «2»"}]}),
                              ToolCall(id="c2", name="bash", arguments={"command": "ls -l", "timeout": 5})]),
    ToolResultMessage(tool_call_id="c1", tool_name="edit", content=[TextContent("Edited "), TextContent("src/p.ts")]),
    ToolResultMessage(tool_call_id="c2", tool_name="bash", content=[TextContent("x" * 2500)]),
    AssistantMessage(content=[ThinkingContent("only thinking")]),
    AssistantMessage(content=[TextContent(""), TextContent("Done.")]),
    UserMessage(content="plain string"),
]


def test_thinking_is_left_out_and_arguments_are_compact_json():
    text = serialize(MESSAGES)
    assert "parser is in" not in text and "only thinking" not in text
    assert '[Assistant tool calls]: edit(path="src/p.ts", edits=[{"oldText":"a: 1","newText":"ü = «2»"}]); ' \
           'bash(command="ls -l", timeout=5)' in text
    assert "[User]: Fix the parser." in text and "[Tool result]: Edited src/p.ts" in text
    assert "[... 500 more characters truncated]" in text


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_the_transcript_is_pi_16s():
    from support.programs import PI16, node_for, require_real

    require_real("pi16")
    payload = json.dumps([to_json(m) for m in MESSAGES])
    done = subprocess.run([node_for("pi16"), "--input-type=module", "-e", _PI16_SERIALIZE,
                           str(PI16 / "dist" / "core" / "compaction" / "utils.js"), payload],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert serialize(MESSAGES) == done.stdout
