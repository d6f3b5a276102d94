"""Hooks of the agent loop: input, requests, turns and messages."""

from hookspecs.markers import hookspec


@hookspec
def input(event, ctx):
    """Kind: chain (stops when a result has ``handled`` set).

    Fires when the user submits text, before skill and prompt-template expansion.
    ``event`` is a :class:`pi_core.events.InputEvent` (``text``, ``images``, ``source``).
    Return a changed event (``attrs.evolve(event, text=...)``) to transform the input,
    ``attrs.evolve(event, handled=True)`` to consume it (nothing reaches the agent), or
    ``None`` to pass it on unchanged.
    """


@hookspec
def before_agent_start(event, ctx):
    """Kind: chain.

    Fires once per prompt, after input expansion and before the loop starts.
    ``event`` is a :class:`pi_core.events.BeforeAgentStartEvent` holding ``prompt``,
    ``images``, the ``system_prompt`` for this run and ``messages`` to inject before the
    prompt. Return a changed event to replace the system prompt or inject messages.
    """


@hookspec
def agent_start(event, ctx):
    """Kind: notify. A run of the agent loop begins (``event``: AgentStart)."""


@hookspec
def agent_end(event, ctx):
    """Kind: notify. A run ended; ``event.messages`` holds every message it produced."""


@hookspec
def turn_start(event, ctx):
    """Kind: notify. A turn (one assistant response and its tool calls) begins."""


@hookspec
def turn_end(event, ctx):
    """Kind: notify. A turn ended: ``event.message`` is the assistant message and
    ``event.tool_results`` the tool results in the order the assistant called them."""


@hookspec
def message_start(event, ctx):
    """Kind: notify. A user, assistant, tool-result or custom message starts."""


@hookspec
def message_update(event, ctx):
    """Kind: notify. One streamed event of the assistant message being written.

    Fires for every token: keep handlers cheap. ``event.message`` is the partial
    assistant message (the same object each time, updated in place) and
    ``event.assistant_message_event`` the provider event (``text_delta``…).
    """


@hookspec
def message_end(message, ctx):
    """Kind: chain.

    A message is complete, before it is stored in the session. ``message`` is the
    message; return a replacement of the same role to change what is stored and what
    the model sees, or ``None`` to keep it.
    """


@hookspec
def queue_update(event, ctx):
    """Kind: notify. The steering or follow-up queue changed; ``event.steering`` and
    ``event.follow_up`` list the queued texts."""


@hookspec
def prepare_request(request, ctx):
    """Kind: chain.

    Before each LLM request. ``request`` is a :class:`pi_core.provider.RequestContext`
    (``system_prompt``, ``messages``, ``tools``, ``model``, ``thinking_level``). Return a
    changed request to compact, inject or edit what is sent, or ``None``. The compaction
    plugin checks its threshold here, so a long tool run compacts mid-run and goes on.
    """


@hookspec
def context(messages, ctx):
    """Kind: chain.

    Before each LLM call, after ``prepare_request``. ``messages`` is a copy of the agent
    messages about to be converted; return a new list to change them for this call only.
    """


@hookspec
def convert_to_llm(messages, ctx):
    """Kind: chain.

    Turns agent messages into LLM messages, after ``context``. Each handler maps the
    message kinds it knows (``bashExecution``, ``custom``, summaries…) into user,
    assistant or tool-result messages and returns the new list. Whatever is still not an
    LLM message when the chain ends is dropped.
    """
