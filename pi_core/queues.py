"""What waits for the loop: steering and follow-up messages, and the refusal to start a
second run while one goes (:class:`pi_core.loop.Agent` holds one queue of each)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pi_core.protocol.messages import AgentMessage, ImageContent, TextContent, UserMessage

QueueMode = Literal["all", "one-at-a-time"]


class AgentBusyError(RuntimeError):
    """A run is already going; queue with steer() or follow_up(), or wait for it."""


class MessageQueue:
    """Steering or follow-up messages waiting for the loop; ``one-at-a-time`` hands
    them out singly, ``all`` together."""

    def __init__(self, mode: QueueMode = "one-at-a-time"):
        self.mode = mode
        self.messages: list[AgentMessage] = []

    def drain(self) -> list[AgentMessage]:
        if self.mode == "all":
            drained, self.messages = self.messages, []
            return drained
        return [self.messages.pop(0)] if self.messages else []

    def clear(self) -> list[AgentMessage]:
        cleared, self.messages = self.messages, []
        return cleared

    def __len__(self) -> int:
        return len(self.messages)


def user_message(content: str | AgentMessage, images: Iterable[ImageContent] = ()) -> AgentMessage:
    """A user message from text (stored as a list of blocks, as pi does), or the message."""
    if not isinstance(content, str):
        return content
    return UserMessage(content=[TextContent(content), *images])
