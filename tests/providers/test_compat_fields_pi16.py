"""The rest of pi 1.6's ``compat`` fields that shape a request, compared with the bodies
pi-ai 1.6's own request builder makes for the same model, conversation and options:
Chat Completions' ``zaiToolStream`` (``tool_stream``), ``vllmPriority`` (``priority``),
``supportsThinkingTokenBudget`` / ``thinkingTokenBudgetField``, the ``chat-template``
(``chatTemplateKwargs``) and ``baseten`` (``chatTemplateArgs``) thinking formats, and
Anthropic's ``supportsTemperature``, ``supportsCacheControlOnTools`` and ``supportsStrictTools``
(pi's constrained tools strict where their schema has nothing Anthropic's strict mode refuses),
``supportsStrictMode`` on the Responses API (off unless said; Azure on unless said), and its
``supportsMidConvoEffort`` (the level in a ``configuration_update`` item) and
``supportsExplicitPromptCacheMode`` (``prompt_cache_options``); Anthropic's
``allowedFallbackModels`` (``fallbacks``) and ``allowEmptySignature`` (unsigned thinking
replayed as thinking, not text)."""

import contextlib
import copy
import json
import os
import subprocess
from pathlib import Path

import attrs
import pytest
from support.llm_server import Reply
from support.provider_streams import collect, run

from pi_core.protocol.messages import UserMessage
from pi_core.protocol.model import ModelCost
from pi_core.protocol.provider import StreamOptions
from pi_plugins.providers import grammar_tools
from tests.providers.test_request_fields_pi16 import (
    ANTHROPIC,
    CROSS,
    LOCAL,
    RESPONSES,
    SIMPLE,
    context_from_json,
    our_body,
    our_model,
)

HERE = Path(__file__).parent
TEMPLATE = {"enable_thinking": {"$var": "thinking.enabled"}, "budget": {"$var": "thinking.budget"},
            "effort": {"omitWhenOff": True}, "fixed": 3}
PREFER = {"constrainedSampling": {"type": "json_schema", "strict": "prefer"}}  # as pi's read, bash, edit, write
STRICT_TOOLS = {**SIMPLE, "tools": [
    {"name": "read", "description": "Read a file", **PREFER, "parameters": {
        "type": "object", "required": ["path"], "properties": {"path": {"type": "string"}, "limit": {"type": "number"}}}},
    {"name": "edit", "description": "Edit a file", **PREFER, "parameters": {  # a keyword strict mode refuses
        "type": "object", "required": ["path"], "properties": {"path": {"type": "string"},
                                                                "count": {"type": "number", "minimum": 0}}}},
    {"name": "other", "description": "Not one of pi's", "parameters": {
        "type": "object", "required": [], "properties": {"x": {"type": "string"}}}}]}
UNSIGNED = copy.deepcopy(CROSS)  # the first thinking block unsigned, as an aborted stream leaves it
next(m for m in UNSIGNED["messages"] if m["role"] == "assistant")["content"][0]["thinkingSignature"] = ""
LEVELLED = copy.deepcopy(CROSS)  # Claude's reply kept the level it was given
next(m for m in LEVELLED["messages"] if m["role"] == "assistant")["providerThinkingLevel"] = "low"
MID_EFFORT = {**ANTHROPIC, "compat": {"supportsMidConvoEffort": True, "forceAdaptiveThinking": True}}
LARK = 'start: "*** Begin" NEWLINE BODY\nNEWLINE: /\\n/\nBODY: /[\\s\\S]+/\n'
PATCH_TOOL = {"name": "apply_patch", "description": "Apply a patch",
              "constrainedSampling": {"type": "grammar", "variants": {"openai_lark": LARK}},
              "parameters": {"type": "object", "required": ["patch"], "properties": {"patch": {"type": "string"}}}}
FIND_TOOL = {"name": "find", "description": "Find files by pattern",
             "constrainedSampling": {"type": "grammar", "variants": {"openai_regex": "[a-z*./]+"}},
             "parameters": {"type": "object", "required": ["glob"], "properties": {"glob": {"type": "string"}}}}


def _turn(api: str, provider: str, model: str, call_id: str) -> list[dict]:
    """An earlier turn in which the model called the patch tool, and its result."""
    return [{"role": "assistant", "api": api, "provider": provider, "model": model, "stopReason": "toolUse",
             "content": [{"type": "toolCall", "id": call_id, "name": "apply_patch",
                          "arguments": {"patch": "*** Begin\n+\"quoted\" line\n"}}],
             "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                       "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
             "timestamp": 2},
            {"role": "toolResult", "toolCallId": call_id, "toolName": "apply_patch", "isError": False,
             "content": [{"type": "text", "text": "patched"}], "timestamp": 3},
            {"role": "user", "content": "Thanks", "timestamp": 4}]


GRAMMAR_TOOLS = {**SIMPLE, "tools": [PATCH_TOOL, FIND_TOOL, STRICT_TOOLS["tools"][0]]}
PATCHED_HERE = {**GRAMMAR_TOOLS, "messages": [*SIMPLE["messages"], *_turn(
    "openai-responses", "openai", RESPONSES["id"], "call_1|ctc_1")]}
PATCHED_LOCALLY = {**GRAMMAR_TOOLS, "messages": [*SIMPLE["messages"], *_turn(
    "openai-completions", "local", LOCAL["id"], "call_1")]}
ANSWERED_AT_LOW = {**SIMPLE, "messages": [*SIMPLE["messages"], *_turn(
    "openai-responses", "openai", RESPONSES["id"], "call_1|fc_1")]}
ANSWERED_AT_LOW["messages"][1] = {**ANSWERED_AT_LOW["messages"][1], "providerThinkingLevel": "low"}
FALLBACKS = [{"provider": "anthropic", "model": "claude-fallback-1",
              "cost": {"input": 10, "output": 20, "cacheRead": 1, "cacheWrite": 12}}]
EXPLICIT = {**RESPONSES, "compat": {"supportsExplicitPromptCacheMode": True}}
BASETEN = {"thinkingFormat": "baseten", "chatTemplateArgs": TEMPLATE, "supportsReasoningEffort": True}


def _local(**compat) -> dict:
    return {**LOCAL, "compat": compat, "thinkingLevelMap": {"off": None, "low": "lite"}}


CASES = {
    "zai_tool_stream": (_local(zaiToolStream=True), CROSS, {}),
    "zai_tool_stream_without_tools": (_local(zaiToolStream=True), SIMPLE, {}),
    "vllm_priority": (_local(vllmPriority=-5), SIMPLE, {}),
    "budget_default_field": (_local(supportsThinkingTokenBudget=True), SIMPLE, {"reasoning": "medium"}),
    "budget_named_field": (_local(thinkingTokenBudgetField="max_thinking_tokens"), SIMPLE, {"reasoning": "high"}),
    "budget_off": (_local(supportsThinkingTokenBudget=True), SIMPLE, {}),
    "chat_template_low": (_local(thinkingFormat="chat-template", chatTemplateKwargs=TEMPLATE), SIMPLE,
                          {"reasoning": "low"}),
    "chat_template_off": (_local(thinkingFormat="chat-template", chatTemplateKwargs=TEMPLATE), SIMPLE, {}),
    "baseten_low": (_local(**BASETEN), SIMPLE, {"reasoning": "low"}),
    "baseten_medium": (_local(**BASETEN), SIMPLE, {"reasoning": "medium"}),
    "baseten_off": (_local(**BASETEN), SIMPLE, {}),
    "anthropic_without_temperature": ({**ANTHROPIC, "compat": {"supportsTemperature": False}}, SIMPLE,
                                      {"temperature": 0.5}),
    "anthropic_with_temperature": (ANTHROPIC, SIMPLE, {"temperature": 0.5}),
    "anthropic_no_cache_on_tools": ({**ANTHROPIC, "compat": {"supportsCacheControlOnTools": False}}, CROSS, {}),
    "anthropic_cache_on_tools": (ANTHROPIC, CROSS, {}),
    "anthropic_strict_tools": ({**ANTHROPIC, "compat": {"supportsStrictTools": True}}, STRICT_TOOLS, {}),
    "anthropic_no_strict_tools": (ANTHROPIC, STRICT_TOOLS, {}),
    "anthropic_mid_convo_effort": (MID_EFFORT, LEVELLED, {"reasoning": "medium"}),
    "anthropic_mid_convo_effort_off": (MID_EFFORT, LEVELLED, {}),
    "anthropic_mid_convo_effort_on_a_budget": ({**ANTHROPIC, "compat": {"supportsMidConvoEffort": True}}, LEVELLED,
                                               {"reasoning": "low"}),
    "anthropic_mid_convo_effort_unsupported": (ANTHROPIC, LEVELLED, {"reasoning": "low"}),
    "completions_grammar_tools": (_local(supportsOpenAIGrammarTools=True), PATCHED_LOCALLY, {}),
    "completions_grammar_tools_unsupported": (_local(), PATCHED_LOCALLY, {}),
    "responses_grammar_tools": ({**RESPONSES, "compat": {"supportsOpenAIGrammarTools": True}}, PATCHED_HERE, {}),
    "responses_grammar_tools_unsupported": (RESPONSES, PATCHED_HERE, {}),
    "responses_unknown_server": (RESPONSES, STRICT_TOOLS, {}),
    "responses_strict": ({**RESPONSES, "compat": {"supportsStrictMode": True}}, STRICT_TOOLS, {}),
    "responses_mid_convo_effort": ({**RESPONSES, "compat": {"supportsMidConvoEffort": True}}, SIMPLE,
                                   {"reasoning": "high"}),
    "responses_mid_convo_effort_after_a_change": ({**RESPONSES, "compat": {"supportsMidConvoEffort": True}},
                                                   ANSWERED_AT_LOW, {"reasoning": "high"}),
    "responses_mid_convo_effort_off": ({**RESPONSES, "compat": {"supportsMidConvoEffort": True}}, SIMPLE, {}),
    "openrouter_routing_zdr": (_local(openRouterRouting={"zdr": True, "only": ["a"]}), SIMPLE, {}),
    "vercel_routing": (_local(vercelGatewayRouting={"order": ["b"]}), SIMPLE, {}),
    "anthropic_fallbacks": ({**ANTHROPIC, "compat": {"allowedFallbackModels": FALLBACKS}}, SIMPLE, {}),
    "anthropic_empty_signature": ({**ANTHROPIC, "compat": {"allowEmptySignature": True}}, UNSIGNED, {}),
    "anthropic_unsigned_as_text": (ANTHROPIC, UNSIGNED, {}),
    "responses_explicit_cache_long": (EXPLICIT, SIMPLE, {"cacheRetention": "long"}),
    "responses_explicit_cache_none": (EXPLICIT, SIMPLE, {"cacheRetention": "none"}),
    "responses_explicit_cache_short": (EXPLICIT, SIMPLE, {}),
    "responses_cache_long": (RESPONSES, SIMPLE, {"cacheRetention": "long"}),
}
FIELDS = ("tool_stream", "priority", "thinking_token_budget", "max_thinking_tokens", "chat_template_kwargs",
          "chat_template_args", "reasoning_effort", "temperature",
          "fallbacks", "thinking", "output_config", "prompt_cache_options", "prompt_cache_retention", "provider", "providerOptions")


@contextlib.contextmanager
def grammars_of(context: dict):
    """The context's grammar tools declared (pi's tools carry ``constrainedSampling``; ours
    are declared by name), for as long as the block runs."""
    tools = [t for t in context.get("tools") or [] if (t.get("constrainedSampling") or {}).get("type") == "grammar"]
    for tool in tools:
        grammar_tools.declare(tool["name"], tool["constrainedSampling"])
    try:
        yield
    finally:
        for tool in tools:
            grammar_tools.declare(tool["name"], None)


def ours(server, model: dict, context: dict, options: dict) -> dict:
    """Our body for a case; pi's ``cacheRetention`` option is our ``PI_CACHE_RETENTION``."""
    saved = os.environ.pop("PI_CACHE_RETENTION", None)
    if options.get("cacheRetention"):
        os.environ["PI_CACHE_RETENTION"] = options["cacheRetention"]
    try:
        with grammars_of(context):
            return our_body(server, model, context, options)
    finally:
        os.environ.pop("PI_CACHE_RETENTION", None)
        if saved is not None:
            os.environ["PI_CACHE_RETENTION"] = saved


def decided(body: dict) -> dict:
    """The fields these compat settings decide, and whether any tool carries a cache marker."""
    tools = body.get("tools") or []
    updates = [(n, i) for n, i in enumerate(body.get("input") or [])
               if isinstance(i, dict) and i.get("type") == "configuration_update"]
    return {"updates": updates, "last_is_update": bool(updates) and updates[-1][0] == len(body["input"]) - 1,
            **({"reasoning": body.get("reasoning")} if "input" in body else {}),**{k: body[k] for k in FIELDS if k in body}, "tool_cache": [("cache_control" in t) for t in tools],
            "custom_tools": [t for t in tools if t.get("type") == "custom"],
            "patch_calls": [c for m in body.get("messages") or [] for c in m.get("tool_calls") or []
                            if "apply_patch" in (c.get("custom") or c["function"])["name"]]
            + [i for i in body.get("input") or [] if isinstance(i, dict) and i.get("call_id") == "call_1"],
            "levels": [(n, m["output_config"]) for n, m in enumerate(body.get("messages") or [])
                       if m.get("role") == "system" and "output_config" in m],
            "replayed": [b for m in body.get("messages") or [] if m.get("role") == "assistant"
                         and isinstance(m.get("content"), list) for b in m["content"]
                         if b.get("type") in ("thinking", "text")],
            "strict": [(t.get("name"), t.get("strict", "absent"), t.get("input_schema") or t.get("parameters"))
                       for t in tools if "input_schema" in t or "parameters" in t]}


def test_the_fields_are_sent_as_the_compat_says(llm_server):
    assert our_body(llm_server, *CASES["zai_tool_stream"])["tool_stream"] is True
    assert "tool_stream" not in our_body(llm_server, *CASES["zai_tool_stream_without_tools"])
    assert our_body(llm_server, *CASES["vllm_priority"])["priority"] == -5
    assert our_body(llm_server, *CASES["budget_default_field"])["thinking_token_budget"] == 8192
    kwargs = our_body(llm_server, *CASES["chat_template_low"])["chat_template_kwargs"]
    assert kwargs == {"enable_thinking": True, "budget": 2048, "effort": "lite", "fixed": 3}
    assert our_body(llm_server, *CASES["chat_template_off"])["chat_template_kwargs"] == \
        {"enable_thinking": False, "fixed": 3}
    assert "temperature" not in our_body(llm_server, *CASES["anthropic_without_temperature"])
    tools = our_body(llm_server, *CASES["anthropic_no_cache_on_tools"])["tools"]
    assert not any("cache_control" in t for t in tools)
    strict = our_body(llm_server, *CASES["anthropic_strict_tools"])["tools"]
    assert [t.get("strict") for t in strict] == [True, None, None]
    assert strict[0]["input_schema"]["required"] == ["path", "limit"]
    assert strict[0]["input_schema"]["additionalProperties"] is False
    assert all("strict" not in t for t in our_body(llm_server, *CASES["responses_unknown_server"])["tools"])
    responses = our_body(llm_server, *CASES["responses_strict"])["tools"]
    assert [t["strict"] for t in responses] == [True, True, False]  # the Responses API takes edit's minimum
    effort = our_body(llm_server, *CASES["responses_mid_convo_effort"])
    assert effort["input"][-1] == {"type": "configuration_update", "reasoning": {"effort": "high"}}
    assert effort["reasoning"]["effort"] == "medium"
    changed = our_body(llm_server, *CASES["responses_mid_convo_effort_after_a_change"])["input"]
    said = [(i.get("type"), i.get("reasoning")) for i in changed if i.get("type") != "function_call_output"]
    assert said[1:] == [(None, None), ("configuration_update", {"effort": "low"}), ("function_call", None),
                        (None, None), ("configuration_update", {"effort": "high"})]  # before the answer at low


def test_grammar_tools_go_as_custom_tools_and_their_calls_come_back_as_custom_where_the_model_takes_them(
        llm_server):
    chat = decided(ours(llm_server, *CASES["completions_grammar_tools"]))
    assert [(t["custom"]["name"], t["custom"]["format"]["grammar"]["syntax"]) for t in chat["custom_tools"]] == [
        ("apply_patch", "lark"), ("find", "regex")]
    assert chat["patch_calls"] == [{"id": "call_1", "type": "custom", "custom": {
        "name": "apply_patch", "input": "*** Begin\n+\"quoted\" line\n"}}]
    responses = decided(ours(llm_server, *CASES["responses_grammar_tools"]))
    assert responses["custom_tools"][0]["format"] == {"type": "grammar", "syntax": "lark", "definition": LARK}
    assert [(i["type"], i.get("id")) for i in responses["patch_calls"]] == [
        ("custom_tool_call", "ctc_1"), ("custom_tool_call_output", None)]
    for name in ("completions_grammar_tools_unsupported", "responses_grammar_tools_unsupported"):
        assert [t["type"] for t in ours(llm_server, *CASES[name])["tools"]] == ["function"] * 3
    broken = {**PATCH_TOOL, "constrainedSampling": {"type": "grammar", "variants": {}}}
    sent = len(llm_server.requests)
    with grammars_of({"tools": [broken]}):
        _, failed = run(collect(our_model(CASES["completions_grammar_tools"][0], llm_server),
                                context_from_json({**SIMPLE, "tools": [broken]})))
    assert failed.stop_reason == "error" and "no supported grammar variant" in failed.error_message
    assert len(llm_server.requests) == sent  # nothing was sent


def test_provider_routing_is_sent_as_written_wherever_the_compat_sets_it(llm_server):
    assert ours(llm_server, *CASES["openrouter_routing_zdr"])["provider"] == {"zdr": True, "only": ["a"]}
    assert ours(llm_server, *CASES["vercel_routing"])["providerOptions"] == {"gateway": {"order": ["b"]}}


def test_anthropic_sends_the_allowed_fallbacks_and_replays_unsigned_thinking_where_allowed(llm_server):
    body = ours(llm_server, *CASES["anthropic_fallbacks"])
    assert body["fallbacks"] == [{"model": "claude-fallback-1"}]
    assert "server-side-fallback-2026-07-01" in llm_server.requests[-1].headers["anthropic-beta"]
    assert "fallbacks" not in ours(llm_server, *CASES["anthropic_unsigned_as_text"])
    replayed = decided(ours(llm_server, *CASES["anthropic_empty_signature"]))["replayed"]
    assert replayed[0] == {"type": "thinking", "thinking": "I should list files.", "signature": ""}
    assert decided(ours(llm_server, *CASES["anthropic_unsigned_as_text"]))["replayed"][0] == \
        {"type": "text", "text": "I should list files."}


def _betas(server) -> list[str]:
    return [b for b in server.requests[-1].headers.get("anthropic-beta", "").split(",") if b]


def test_claude_says_a_changed_thinking_level_in_messages_and_keeps_the_one_it_answered_at(llm_server):
    """``supportsMidConvoEffort`` on the Anthropic API: the fixed fields stay (adaptive,
    ``output_config`` low), the level goes in a system message last, and the answer keeps
    it, so the next request says it again before that answer."""
    model = our_model(MID_EFFORT, llm_server)
    asked = context_from_json(SIMPLE)
    llm_server.push(Reply(text="Hello."))
    _, answer = run(collect(model, asked, StreamOptions(api_key="test-key", thinking_level="medium")))
    first = llm_server.requests[-1].body
    assert (first["thinking"]["type"], first["output_config"], first["messages"][-1]) == (
        "adaptive", {"effort": "low"}, {"role": "system", "content": [], "output_config": {"effort": "medium"}})
    assert "mid-conversation-output-config-2026-07-01" in _betas(llm_server)
    assert answer.extra["providerThinkingLevel"] == "medium"
    later = attrs.evolve(asked, messages=[*asked.messages, answer, UserMessage(content="More", timestamp=2)])
    llm_server.push(Reply(text="More."))
    run(collect(model, later, StreamOptions(api_key="test-key", thinking_level="high")))
    said = [(m["role"], m.get("output_config")) for m in llm_server.requests[-1].body["messages"]]
    assert said == [("user", None), ("system", {"effort": "medium"}), ("assistant", None), ("user", None),
                    ("system", {"effort": "high"})]
    llm_server.push(Reply(text="Off."))
    run(collect(model, later, StreamOptions(api_key="test-key", thinking_level="off")))
    off = llm_server.requests[-1].body
    assert off["thinking"] == {"type": "disabled"} and all(m["role"] != "system" for m in off["messages"])


def _answered_by(model_id: str) -> str:
    events = [{"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant",
                                                    "content": [], "model": model_id,
                                                    "usage": {"input_tokens": 1_000_000, "output_tokens": 0}}},
              {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
              {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "ok"}},
              {"type": "content_block_stop", "index": 0},
              {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1_000_000}},
              {"type": "message_stop"}]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def test_a_reply_from_an_allowed_fallback_costs_that_models_prices(llm_server):
    model = attrs.evolve(our_model({**ANTHROPIC, "compat": {"allowedFallbackModels": FALLBACKS}}, llm_server),
                         cost=ModelCost(input=1, output=2))
    costs = []
    for answered in ("claude-fallback-1", ANTHROPIC["id"], "claude-unlisted"):
        llm_server.push(Reply(raw=_answered_by(answered)))
        _, message = run(collect(model, context_from_json(SIMPLE)))
        costs.append((message.usage.cost.input, message.usage.cost.output))
    assert costs == [(10, 20), (1, 2), (1, 2)]  # the fallback's prices, else the model's own


NO_FINISH = ('data: {"id":"c1","object":"chat.completion.chunk","choices":'
             '[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}\n\ndata: [DONE]\n\n')


def test_a_completions_stream_without_a_finish_reason_fails_unless_the_compat_says_it_has_none(llm_server):
    outcomes = []
    for compat in ({}, {"supportsFinishReason": False}):
        llm_server.push(Reply(raw=NO_FINISH))
        events, message = run(collect(our_model({**LOCAL, "compat": compat}, llm_server), context_from_json(SIMPLE)))
        outcomes.append((events[-1].type, message.stop_reason, (message.error_message or "").split(": ")[-1]))
    assert outcomes == [("error", "error", "Stream ended without finish_reason"), ("done", "stop", "")]


def test_the_responses_api_asks_for_explicit_prompt_caching_where_the_compat_says(llm_server):
    long = ours(llm_server, *CASES["responses_explicit_cache_long"])
    assert (long["prompt_cache_options"], "prompt_cache_retention" in long) == ({"ttl": "30m"}, False)
    assert ours(llm_server, *CASES["responses_explicit_cache_none"])["prompt_cache_options"] == {"mode": "explicit"}
    assert "prompt_cache_options" not in ours(llm_server, *CASES["responses_explicit_cache_short"])
    assert "prompt_cache_options" not in ours(llm_server, *CASES["responses_cache_long"])


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_the_compat_fields_are_pi_16s(llm_server):
    from support.programs import PI16, node_for, require_real

    require_real("pi16")
    closed = {name: {"model": {**model, "baseUrl": "http://127.0.0.1:9" + ("/v1" if "v1" in model["baseUrl"] else "")},
                     "context": context, "options": options}
              for name, (model, context, options) in CASES.items()}
    done = subprocess.run([node_for("pi16"), str(HERE / "pi16_payloads.mjs"), str(PI16.parent / "pi-ai")],
                          input=json.dumps(closed), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)
    for name, (model, context, options) in CASES.items():
        assert decided(ours(llm_server, model, context, options)) == decided(theirs[name]), name
    for name in ("anthropic_mid_convo_effort", "anthropic_mid_convo_effort_on_a_budget",
                 "anthropic_mid_convo_effort_unsupported"):
        ours(llm_server, *CASES[name])
        assert sorted(_betas(llm_server)) == sorted(theirs[name].get("betas", [])), name
    assert theirs["anthropic_mid_convo_effort"]["messages"][-1]["output_config"] == {"effort": "medium"}
    assert theirs["zai_tool_stream"]["tool_stream"] is True  # the cases show what they mean to
    assert "temperature" in theirs["anthropic_with_temperature"]
    assert theirs["responses_mid_convo_effort"]["input"][-1]["type"] == "configuration_update"
    assert theirs["anthropic_fallbacks"]["fallbacks"] == [{"model": "claude-fallback-1"}]
    assert theirs["responses_explicit_cache_long"]["prompt_cache_options"] == {"ttl": "30m"}
    assert theirs["responses_cache_long"]["prompt_cache_retention"] == "24h"
    assert theirs["openrouter_routing_zdr"]["provider"]["zdr"] is True


STRICT_CLAUDE = {**ANTHROPIC, "compat": {"supportsStrictTools": True}}
TOO_MANY = "Too many strict tools (21). The maximum number of strict tools is 20."


def _strict_sent(server, first: int = 0) -> list[list]:
    return [[t.get("strict", False) for t in r.body["tools"]] for r in server.requests[first:]]


def _answer(model: dict, server, session: str | None):
    options = StreamOptions(api_key="test-key", session_id=session, max_retries=0)
    return run(collect(our_model(model, server), context_from_json(STRICT_TOOLS), options))[1]


def test_claude_refusing_strict_tools_past_its_limits_gets_them_again_not_strict_for_the_session(llm_server):
    """The refusal is sent again at once without strict tools, the answer says why, and
    the session's later requests send them not strict from the start; another session
    and any other refusal are left as they are."""
    llm_server.push(Reply(status=400, error=TOO_MANY, error_type="invalid_request_error"), Reply(text="ok"))
    answer = _answer(STRICT_CLAUDE, llm_server, "session-a")
    assert (answer.stop_reason, answer.content[0].text) == ("stop", "ok")
    assert _strict_sent(llm_server) == [[True, False, False], [False, False, False]]
    assert llm_server.requests[1].body["tools"][0]["input_schema"]["required"] == ["path"]  # as declared
    [note] = answer.extra["diagnostics"]
    assert (note["type"], note["details"], note["error"]["message"].startswith("400 {")) == (
        "anthropic_strict_tools_fallback", {"reason": "strict_tool_limits_exceeded"}, True)
    assert TOO_MANY in note["error"]["message"]
    llm_server.push(Reply(text="again"), Reply(text="elsewhere"))
    _answer(STRICT_CLAUDE, llm_server, "session-a")
    _answer(STRICT_CLAUDE, llm_server, "session-b")
    assert _strict_sent(llm_server, 2) == [[False, False, False], [True, False, False]]
    llm_server.push(Reply(status=400, error="prompt is too long", error_type="invalid_request_error"))
    refused = _answer(STRICT_CLAUDE, llm_server, "session-c")
    assert (refused.stop_reason, len(llm_server.requests)) == ("error", 5)


def test_a_refusal_for_strict_tools_is_not_sent_again_when_none_went_strict(llm_server):
    llm_server.push(Reply(status=400, error=TOO_MANY, error_type="invalid_request_error"))
    refused = _answer(ANTHROPIC, llm_server, "session-d")
    assert (refused.stop_reason, len(llm_server.requests), "diagnostics" in refused.extra) == ("error", 1, False)


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_claude_past_its_strict_tool_limits_is_answered_as_pi_16_answers(llm_server):
    """The same scripted refusal, to pi-ai 1.6 and to us: the same requests (strict, then
    not, then not for the session's next request) and the same diagnostic."""
    from support.programs import PI16, node_for, require_real

    require_real("pi16")
    script = [Reply(status=400, error=TOO_MANY, error_type="invalid_request_error"), Reply(text="ok"),
              Reply(text="again")]
    model = {**STRICT_CLAUDE, "baseUrl": llm_server.url}
    requests = [{"model": model, "context": STRICT_TOOLS, "options": {"sessionId": "pi16-limits"}}] * 2
    llm_server.push(*script)
    done = subprocess.run([node_for("pi16"), str(HERE / "pi16_answers.mjs"), str(PI16.parent / "pi-ai")],
                          input=json.dumps(requests), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)
    their_requests = [decided(r.body)["strict"] for r in llm_server.requests]
    llm_server.push(*script)
    answers = [_answer(STRICT_CLAUDE, llm_server, "our-limits") for _ in range(2)]
    assert [decided(r.body)["strict"] for r in llm_server.requests[3:]] == their_requests
    assert [t[1] for t in their_requests[0]] == [True, "absent", "absent"]
    ours_said = [[{k: d[k] for k in ("type", "details")} for d in a.extra.get("diagnostics", [])] for a in answers]
    theirs_said = [[{k: d[k] for k in ("type", "details")} for d in a.get("diagnostics", [])] for a in theirs]
    assert ours_said == theirs_said == [[{"type": "anthropic_strict_tools_fallback",
                                          "details": {"reason": "strict_tool_limits_exceeded"}}], []]
    assert answers[0].extra["diagnostics"][0]["error"] == theirs[0]["diagnostics"][0]["error"]


def _sse(*events: dict, named: bool = False) -> str:
    frames = [(f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n" for e in events]
    return "".join(frames) + ("" if named else "data: [DONE]\n\n")


PATCH = '*** Begin\n+"quoted" line\n'


def _chunk(delta: dict, finish: str | None = None) -> dict:
    return {"id": "c1", "object": "chat.completion.chunk", "model": LOCAL["id"],
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


#: The model calls the grammar tool with raw text, in pieces, on each API.
CUSTOM_CALLS = {
    "openai-completions": _sse(
        _chunk({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_9", "type": "custom",
                                                      "custom": {"name": "apply_patch", "input": ""}}]}),
        _chunk({"tool_calls": [{"index": 0, "custom": {"input": PATCH[:10]}}]}),
        _chunk({"tool_calls": [{"index": 0, "custom": {"input": PATCH[10:]}}]}),
        _chunk({}, "tool_calls")),
    "openai-responses": _sse(
        {"type": "response.created", "response": {"id": "resp_9", "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": {
            "type": "custom_tool_call", "id": "ctc_9", "call_id": "call_9", "name": "apply_patch", "input": ""}},
        {"type": "response.custom_tool_call_input.delta", "output_index": 0, "item_id": "ctc_9", "delta": PATCH[:10]},
        {"type": "response.custom_tool_call_input.delta", "output_index": 0, "item_id": "ctc_9", "delta": PATCH[10:]},
        {"type": "response.custom_tool_call_input.done", "output_index": 0, "item_id": "ctc_9", "input": PATCH},
        {"type": "response.output_item.done", "output_index": 0, "item": {
            "type": "custom_tool_call", "id": "ctc_9", "call_id": "call_9", "name": "apply_patch", "input": PATCH,
            "status": "completed"}},
        {"type": "response.completed", "response": {"id": "resp_9", "status": "completed", "usage": {
            "input_tokens": 5, "output_tokens": 7, "total_tokens": 12}}}, named=True),
}
GRAMMAR_MODELS = {"openai-completions": _local(supportsOpenAIGrammarTools=True),
                  "openai-responses": {**RESPONSES, "compat": {"supportsOpenAIGrammarTools": True}}}


def _our_custom_call(llm_server, api: str):
    llm_server.push(Reply(raw=CUSTOM_CALLS[api]))
    with grammars_of(GRAMMAR_TOOLS):
        events, answer = run(collect(our_model(GRAMMAR_MODELS[api], llm_server), context_from_json(GRAMMAR_TOOLS)))
    return events, answer


@pytest.mark.parametrize("api", list(CUSTOM_CALLS))
def test_a_grammar_tools_raw_input_is_parsed_into_the_calls_one_argument(llm_server, api):
    events, answer = _our_custom_call(llm_server, api)
    [call] = answer.tool_calls
    assert (answer.stop_reason, call.name, call.arguments) == ("toolUse", "apply_patch", {"patch": PATCH})
    assert call.id == ("call_9|ctc_9" if api == "openai-responses" else "call_9")
    streamed = "".join(e.delta for e in events if e.type == "toolcall_delta")
    assert json.loads(streamed) == {"patch": PATCH}  # the deltas are the arguments' JSON text


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_a_grammar_tools_call_is_parsed_as_pi_16_parses_it(llm_server):
    from support.programs import PI16, node_for, require_real

    require_real("pi16")
    requests = [{"model": {**GRAMMAR_MODELS[api], "baseUrl": llm_server.base_url(api)}, "context": GRAMMAR_TOOLS,
                 "options": {}} for api in CUSTOM_CALLS]
    llm_server.push(*(Reply(raw=raw) for raw in CUSTOM_CALLS.values()))
    done = subprocess.run([node_for("pi16"), str(HERE / "pi16_answers.mjs"), str(PI16.parent / "pi-ai")],
                          input=json.dumps(requests), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)
    for api, their in zip(CUSTOM_CALLS, theirs, strict=True):
        _, answer = _our_custom_call(llm_server, api)
        [call] = [b for b in their["content"] if b["type"] == "toolCall"]
        assert (answer.stop_reason, [(c.id, c.name, c.arguments) for c in answer.tool_calls]) == (
            their["stopReason"], [(call["id"], call["name"], call["arguments"])]), api
