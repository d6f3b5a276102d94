"""GitHub Copilot's requests (provider ``github-copilot``), as pi 0.73.1 sends them.

Copilot serves each model over the API the catalogue names for it (Claude models over
``anthropic-messages``, GPT models over ``openai-responses`` or ``openai-completions``), so
this is no provider of its own: each of those providers passes its request through
:func:`adapt`. It sends the Copilot token (from ``pi auth login github-copilot``: the
GitHub token exchanged, refreshed like any sign-in) as Bearer to the API the token names
(its ``proxy-ep``), with the editor headers the catalogue gives the model and the
per-request ones: ``X-Initiator`` (``user`` when the user spoke last, else ``agent``),
``Openai-Intent: conversation-edits`` and, with images, ``Copilot-Vision-Request``.
"""

from __future__ import annotations

from pi_core.protocol.messages import ImageContent, ToolResultMessage, UserMessage

PROVIDER = "github-copilot"
DEFAULT_BASE_URL = "https://api.individual.githubcopilot.com"


def is_copilot(model) -> bool:
    return model.provider == PROVIDER


def dynamic_headers(messages: list) -> dict[str, str]:
    last = messages[-1] if messages else None
    initiator = "agent" if last is not None and not isinstance(last, UserMessage) else "user"
    headers = {"X-Initiator": initiator, "Openai-Intent": "conversation-edits"}
    if any(isinstance(m, (UserMessage, ToolResultMessage)) and not isinstance(m.content, str)
           and any(isinstance(b, ImageContent) for b in m.content) for m in messages):
        headers["Copilot-Vision-Request"] = "true"
    return headers


def adapt(model, context, options, request) -> None:
    """Point ``request`` at the API the Copilot token names and add Copilot's headers."""
    if model.base_url.rstrip("/") == DEFAULT_BASE_URL and options.api_key:
        # the sign-in flows (a local callback server, hashing) are imported by Copilot
        # requests only, not by every provider that can speak to Copilot
        from pi_plugins.signin.flows import copilot_base_url

        base = copilot_base_url(options.api_key)
        if base != DEFAULT_BASE_URL:
            request.url = base + request.url[len(DEFAULT_BASE_URL):]
    request.headers.update(dynamic_headers(context.messages))
    request.headers.update(options.headers or {})  # the caller's headers stay last
