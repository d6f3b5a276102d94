"""How pi's app messages reach the model: as user messages (``convert_to_llm``).

``bashExecution`` becomes the command and its output (left out entirely for ``!!cmd``);
``custom`` becomes its content; compaction and branch summaries become the summary inside
a short framing sentence. With the setting ``images.blockImages`` no image reaches the
model: each becomes the text "Image reading is disabled." (one for a run of them), as in pi.
"""

from __future__ import annotations

from attrs import evolve

from pi_core import hookimpl
from pi_core.protocol.messages import (
    AssistantMessage,
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    TextContent,
    ToolResultMessage,
    UnknownMessage,
    UserMessage,
)

COMPACTION_FRAME = (
    "Earlier parts of this conversation were condensed into the summary below.\n\n"
    "<summary>\n{summary}\n</summary>"
)
BRANCH_FRAME = (
    "The conversation explored another branch before returning here; "
    "this summarises that branch.\n\n<summary>\n{summary}\n</summary>"
)


def bash_text(message: BashExecutionMessage) -> str:
    """The user's shell command and what it printed, worded for the model."""
    lines = [f"The user ran a shell command: `{message.command}`"]
    if message.cancelled:
        lines.append("It was cancelled before it finished.")
    elif message.exit_code not in (0, None):
        lines.append(f"It exited with code {message.exit_code}.")
    lines += ["Output:", "```", message.output.rstrip("\n") or "(no output)", "```"]
    if message.truncated and message.full_output_path:
        lines.append(f"(Output shortened; the whole of it is in {message.full_output_path})")
    return "\n".join(lines)


def to_llm(message):
    """The LLM message for one app message, ``None`` to leave it out, or itself."""
    if isinstance(message, BashExecutionMessage):
        if message.exclude_from_context:
            return None
        text = bash_text(message)
    elif isinstance(message, CustomMessage):
        if not isinstance(message.content, str):
            return UserMessage(content=list(message.content), timestamp=message.timestamp)
        text = message.content
    elif isinstance(message, CompactionSummaryMessage):
        text = COMPACTION_FRAME.format(summary=message.summary)
    elif isinstance(message, BranchSummaryMessage):
        text = BRANCH_FRAME.format(summary=message.summary)
    elif isinstance(message, UnknownMessage):  # pi 1.6's system messages: the prompt is ours
        return None
    else:
        return message
    return UserMessage(content=[TextContent(text)], timestamp=message.timestamp)


_LLM = (UserMessage, AssistantMessage, ToolResultMessage)  # passed on as they are


@hookimpl
def convert_to_llm(messages, ctx):
    out = []
    for m in messages:  # a resumed history: tens of thousands, nearly all LLM messages
        if type(m) in _LLM:
            out.append(m)
        elif (m := to_llm(m)) is not None:
            out.append(m)
    settings = getattr(ctx, "settings", None)
    if settings is not None and settings.get("images.blockImages", False):
        out = [_without_images(m) for m in out]
    return out


IMAGES_BLOCKED = "Image reading is disabled."


def _without_images(message):
    content = getattr(message, "content", None)
    if not isinstance(content, list) or not any(getattr(c, "type", None) == "image" for c in content):
        return message
    kept = []
    for block in content:
        if getattr(block, "type", None) == "image":
            if kept and getattr(kept[-1], "text", None) == IMAGES_BLOCKED:
                continue
            block = TextContent(IMAGES_BLOCKED)
        kept.append(block)
    return evolve(message, content=kept)
