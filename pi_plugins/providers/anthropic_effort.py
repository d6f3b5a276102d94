"""pi 1.6's ``compat.supportsMidConvoEffort`` on the Anthropic API: a model whose thinking
level can change between messages without breaking the cached prompt.

Such a request carries the ``mid-conversation-output-config`` and
``thinking-binding-controls`` betas. Unless thinking is switched off (a reasoning model at
``off`` whose ``thinkingLevelMap`` can turn it off), the level is said by messages, not by
the fixed fields: the top-level ``output_config`` stays ``{"effort": "low"}`` (part of the
cached prefix, and the lowest, as an organisation's cap refuses anything above it),
thinking is adaptive with ``block_binding`` ``drop_block``, an empty ``system`` message
with ``output_config`` goes before each earlier reply of this provider that recorded its
level (``providerThinkingLevel``), and one with the level asked now goes last. The answer
keeps its level as ``providerThinkingLevel``, for the next requests to say it again.
"""

from __future__ import annotations

from typing import Any

from pi_core.protocol.model import Model
from pi_core.protocol.provider import StreamOptions

MID_CONVERSATION_OUTPUT_CONFIG_BETA = "mid-conversation-output-config-2026-07-01"
THINKING_BINDING_CONTROLS_BETA = "thinking-binding-controls-2026-08-01"
EFFORTS = frozenset({"low", "medium", "high", "xhigh", "max"})
#: The fixed fields of such a request: the level itself is in the messages.
THINKING = {"type": "adaptive", "display": "summarized", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
OUTPUT_CONFIG = {"effort": "low"}


def mid_convo_effort(model: Model) -> bool:
    return (model.compat or {}).get("supportsMidConvoEffort") is True


def betas(model: Model) -> list[str]:
    return [MID_CONVERSATION_OUTPUT_CONFIG_BETA, THINKING_BINDING_CONTROLS_BETA] if mid_convo_effort(model) else []


def thinking_disabled(model: Model, options: StreamOptions) -> bool:
    """A reasoning model asked not to think, where its level map can switch thinking off."""
    levels = model.thinking_level_map or {}
    off = options.thinking_level in (None, "off")
    return bool(model.reasoning and off and ("off" not in levels or levels["off"] is not None))


def says_levels(model: Model, options: StreamOptions) -> bool:
    """Whether this request says the thinking level in messages."""
    return mid_convo_effort(model) and not thinking_disabled(model, options)


def recorded_level(model: Model, message: Any) -> str | None:
    """The level an earlier reply of this provider was given, where it kept one."""
    level = message.extra.get("providerThinkingLevel")
    same = getattr(message, "api", None) == model.api and getattr(message, "provider", None) == model.provider
    return level if same and level in EFFORTS else None


def with_levels(messages: list[dict], levels: dict[int, str], active: str) -> list[dict]:
    """``messages`` with a level message before each reply in ``levels`` (by index) and the
    level asked now at the end."""
    said: list[dict] = []
    for index, message in enumerate(messages):
        if index in levels:
            said.append({"role": "system", "content": [], "output_config": {"effort": levels[index]}})
        said.append(message)
    said.append({"role": "system", "content": [], "output_config": {"effort": active}})
    return said
