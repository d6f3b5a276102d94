"""Hooks of the agent loop: input, requests, turns and messages."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hookspecs.markers import chain, decide, hookspec, notify

if TYPE_CHECKING:
    from pi_core.protocol.ctx import Ctx
    from pi_core.protocol.events import (
        AfterRunEvent,
        AgentEnd,
        AgentStart,
        BeforeAgentStartEvent,
        InputEvent,
        MessageStart,
        MessageUpdate,
        QueueUpdate,
        RunDecision,
        TurnEnd,
        TurnStart,
    )
    from pi_core.protocol.messages import AgentMessage
    from pi_core.protocol.provider import RequestContext


@hookspec
@chain("event")
def input(event: InputEvent, ctx: Ctx) -> InputEvent | None:
    """Kind: chain (stops when a result has ``handled`` set).

    Fires when the user submits text, before skill and prompt-template expansion.
    ``event`` is a :class:`pi_core.protocol.events.InputEvent` (``text``, ``images``, ``source``).
    Return a changed event (``attrs.evolve(event, text=...)``) to transform the input,
    ``attrs.evolve(event, handled=True)`` to consume it (nothing reaches the agent), or
    ``None`` to pass it on unchanged.
    """


@hookspec
@chain("event")
def before_agent_start(event: BeforeAgentStartEvent, ctx: Ctx) -> BeforeAgentStartEvent | None:
    """Kind: chain.

    Fires once per prompt, after input expansion and before the loop starts.
    ``event`` is a :class:`pi_core.protocol.events.BeforeAgentStartEvent` holding ``prompt``,
    ``images``, the ``system_prompt`` for this run, ``messages`` to inject after the
    prompt (pi's ``message``) and ``before_prompt``, messages that go before it (as pi
    1.6's system-prompt section updates do). Return a changed event to replace the system
    prompt or inject messages.
    """


@hookspec
@notify
def agent_start(event: AgentStart, ctx: Ctx) -> None:
    """Kind: notify. A run of the agent loop begins (``event``: AgentStart)."""


@hookspec
@notify
def agent_end(event: AgentEnd, ctx: Ctx) -> None:
    """Kind: notify. A run ended; ``event.messages`` holds every message it produced."""


@hookspec
@decide(result="pi_core.protocol.results:run_decision")
def after_agent_run(event: AfterRunEvent, ctx: Ctx) -> RunDecision | None:
    """Kind: decide.

    A run of the loop ended (after ``agent_end``) and nothing else is under way.
    Return ``RunDecision(run_again=True)`` (or ``{"runAgain": True}``) to send the request
    again from the context as it now is: a failed answer the context ends in is left out
    of it (it stays in the session file), as pi's retries do. Called again after every
    run it asked for (``event.continued`` counts them), and not at all once the user
    aborted (``event.signal``). The built-in ``retries`` plugin retries rate limits and
    server errors here with backoff, and compacts and retries once on a context overflow.
    """


@hookspec
@decide
def run_settling(event: AfterRunEvent, ctx: Ctx) -> bool | None:
    """Kind: decide. The prompt's runs are done: ``after_agent_run`` asked for none, nothing
    is queued and ``event.signal`` was not aborted. Return ``True`` to send one more
    request from the context as it now is. The built-in ``settle_boundary`` answers with
    pi 1.6's ``agent_before_settle`` (below)."""


def settle_proposal(value: Any, previous: Any) -> Any:
    """An ``agent_before_settle`` handler's result: the event, changed, or pi's
    ``{"entries": [...], "continue": bool}`` (a field left out keeps the proposal's)."""
    if isinstance(value, dict):
        import attrs

        entries = value.get("entries", previous.entries)
        if not isinstance(entries, list):
            raise TypeError("agent_before_settle's entries is a list of entry drafts")
        return attrs.evolve(previous, entries=list(entries),
                            continue_run=bool(value.get("continue", previous.continue_run)))
    if type(value) is not type(previous):
        raise TypeError(f"agent_before_settle returns the event (attrs.evolve(event, ...)) or "
                        f"{{'entries': [...], 'continue': bool}}, not {type(value).__name__}")
    return value


@hookspec
@chain("event", result="hookspecs.loop:settle_proposal")
def agent_before_settle(event: Any, ctx: Ctx) -> Any:
    """Kind: chain. pi 1.6: the last point where a prompt's work can go on, after
    retries and queued messages, before ``agent_settled`` (not after an abort).
    ``event`` holds ``messages`` (what the
    prompt produced) and the proposal so far: ``entries``, drafts in pi's JSON shape
    (``{"type": "custom_message", "customType", "content", "display"}``, ``custom``
    with ``data``, ``context_edit`` with ``targetId`` and ``replacement``,
    ``compaction``), and ``continue_run``. Return ``attrs.evolve(event, ...)`` to change
    them. When every handler has run, the drafts are checked (one bad draft drops the
    whole proposal, reported), appended in order, and ``continue_run`` sends one more
    request from the context. ``event.context`` is pi's preview of that context with the
    drafts so far applied (``context_messages``, ``llm_messages``, ``pending_messages``,
    ``can_continue``), ``event.outcome`` how the last answer ended. Continuing from the
    model's own last answer, with nothing after it, is reported and settles (as pi 1.6).
    Guard it: a handler that always continues never settles."""


@hookspec
@decide
def system_prompt_options(ctx: Ctx) -> Any:
    """Kind: decide. pi 1.6's ``ctx.getSystemPromptOptions()``: the inputs the system
    prompt is built from (``await ctx.system_prompt_options()``). The built-in
    ``system_prompt`` answers with its ``SystemPromptOptions`` (custom and appended
    prompt, the tools and their snippets and guidelines, cwd, context files, skills)."""


@hookspec
@notify
def agent_settled(event: Any, ctx: Ctx) -> None:
    """Kind: notify. pi 1.6: the prompt's work is all done (no retry, no compaction and
    retry, no queued message follows); ``event.aborted`` says whether it was aborted.
    ``agent_end`` closes each run of the loop; this closes what the user asked for."""


@hookspec
@notify
def turn_start(event: TurnStart, ctx: Ctx) -> None:
    """Kind: notify. A turn (one assistant response and its tool calls) begins;
    ``event.turn_index`` counts from 0 in each run."""


@hookspec
@notify
def turn_end(event: TurnEnd, ctx: Ctx) -> None:
    """Kind: notify. A turn ended: ``event.message`` is the assistant message and
    ``event.tool_results`` the tool results in the order the assistant called them."""


@hookspec
@notify
def message_start(event: MessageStart, ctx: Ctx) -> None:
    """Kind: notify. A user, assistant, tool-result or custom message starts."""


@hookspec
@notify
def message_update(event: MessageUpdate, ctx: Ctx) -> None:
    """Kind: notify. One streamed event of the assistant message being written.

    Fires for every token: keep handlers cheap. ``event.message`` is the partial
    assistant message (the same object each time, updated in place) and
    ``event.assistant_message_event`` the provider event (``text_delta``…).
    """


@hookspec
@chain("message", result="pi_core.protocol.results:same_role_message")
def message_end(message: AgentMessage, ctx: Ctx) -> AgentMessage | dict | None:
    """Kind: chain.

    A message is complete, before it is stored in the session. ``message`` is the
    message; return a replacement of the same role to change what is stored and what
    the model sees (the message object or its pi JSON dict), or ``None`` to keep it. A
    replacement of another role is reported with your plugin's name and ignored.
    """


@hookspec
@notify
def queue_update(event: QueueUpdate, ctx: Ctx) -> None:
    """Kind: notify. The steering or follow-up queue changed; ``event.steering`` and
    ``event.follow_up`` list the queued texts."""


@hookspec
@chain("request")
def prepare_request(request: RequestContext, ctx: Ctx) -> RequestContext | None:
    """Kind: chain.

    Before each LLM request. ``request`` is a :class:`pi_core.protocol.provider.RequestContext`
    (``system_prompt``, ``messages``, ``tools``, ``model``, ``thinking_level``). Return a
    changed request to compact, inject or edit what is sent, or ``None``. The compaction
    plugin checks its threshold here, so a long tool run compacts mid-run and goes on.
    A request returned with ``stop=True`` is not sent: the run ends there (the ``budget``
    plugin does this past a spend limit).
    """


@hookspec
@chain("messages")
def context(messages: list[AgentMessage], ctx: Ctx) -> list[AgentMessage] | None:
    """Kind: chain.

    Before each LLM call, after ``prepare_request``. ``messages`` is a copy of the agent
    messages about to be converted; return a new list to change them for this call only.
    With the ``system_messages`` built-in (pi 1.6's), handlers see them without the
    session's system messages; a changed list gets the replayed prompt and tools back as
    one leading system message (an unchanged one keeps them in place).
    """


@hookspec
@chain("messages")
def context_with_system(messages: list[AgentMessage], ctx: Ctx) -> list[AgentMessage] | None:
    """Kind: chain. pi 1.6's ``context_with_system``.

    Before each LLM call, after every ``context`` handler: ``messages`` is the whole
    transcript with its system messages (the leading one and any later prompt or tool
    changes); what the chain returns is sent as it is, so a handler owns the prompt and
    tool declarations of this request. Keep a system message first: a list without one
    is reported as the handler's error and the transcript before the chain is sent. Run
    by the ``system_messages`` built-in.
    """


@hookspec
@chain("messages")
def convert_to_llm(messages: list[AgentMessage], ctx: Ctx) -> list[AgentMessage] | None:
    """Kind: chain.

    Turns agent messages into LLM messages, after ``context``. Each handler maps the
    message kinds it knows (``bashExecution``, ``custom``, summaries…) into user,
    assistant or tool-result messages and returns the new list. Whatever is still not an
    LLM message when the chain ends is dropped.
    """
