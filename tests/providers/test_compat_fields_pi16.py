"""The rest of pi 1.6's ``compat`` fields that shape a request, compared with the bodies
pi-ai 1.6's own request builder makes for the same model, conversation and options:
Chat Completions' ``zaiToolStream`` (``tool_stream``), ``vllmPriority`` (``priority``),
``supportsThinkingTokenBudget`` / ``thinkingTokenBudgetField``, the ``chat-template``
(``chatTemplateKwargs``) and ``baseten`` (``chatTemplateArgs``) thinking formats, and
Anthropic's ``supportsTemperature``, ``supportsCacheControlOnTools`` and ``supportsStrictTools``
(pi's constrained tools strict where their schema has nothing Anthropic's strict mode refuses),
``supportsStrictMode`` on the Responses API (off unless said; Azure on unless said), and its
``supportsMidConvoEffort`` (the level in a ``configuration_update`` item)."""

import json
import subprocess
from pathlib import Path

import pytest

from tests.providers.test_request_fields_pi16 import ANTHROPIC, CROSS, LOCAL, RESPONSES, SIMPLE, our_body

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
    "responses_unknown_server": (RESPONSES, STRICT_TOOLS, {}),
    "responses_strict": ({**RESPONSES, "compat": {"supportsStrictMode": True}}, STRICT_TOOLS, {}),
    "responses_mid_convo_effort": ({**RESPONSES, "compat": {"supportsMidConvoEffort": True}}, SIMPLE,
                                   {"reasoning": "high"}),
    "responses_mid_convo_effort_off": ({**RESPONSES, "compat": {"supportsMidConvoEffort": True}}, SIMPLE, {}),
}
FIELDS = ("tool_stream", "priority", "thinking_token_budget", "max_thinking_tokens", "chat_template_kwargs",
          "chat_template_args", "reasoning_effort", "temperature")


def decided(body: dict) -> dict:
    """The fields these compat settings decide, and whether any tool carries a cache marker."""
    tools = body.get("tools") or []
    updates = [i for i in body.get("input") or [] if isinstance(i, dict) and i.get("type") == "configuration_update"]
    return {"updates": updates, "last_is_update": bool(updates) and body["input"][-1] == updates[-1],
            **({"reasoning": body.get("reasoning")} if "input" in body else {}),**{k: body[k] for k in FIELDS if k in body}, "tool_cache": [("cache_control" in t) for t in tools],
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
        assert decided(our_body(llm_server, model, context, options)) == decided(theirs[name]), name
    assert theirs["zai_tool_stream"]["tool_stream"] is True  # the cases show what they mean to
    assert "temperature" in theirs["anthropic_with_temperature"]
    assert theirs["responses_mid_convo_effort"]["input"][-1]["type"] == "configuration_update"
