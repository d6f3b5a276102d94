"""Request fields pi 1.6 decides from models.json and the catalogue: for OpenAI-compatible
APIs ``samplingParams`` and ``samplingParamsByThinkingLevel``, and the ``compat`` fields
``requiresToolsWithToolHistory`` (``"tools": []`` only when asked),
``requiresNonNullAssistantContent``, ``promptCacheKeyMode`` and the session-affinity
headers; for Claude, ``forceAdaptiveThinking`` (an effort, not a budget). The bodies are
compared with the ones pi-ai 1.6's own request builder makes for the same model,
conversation and options."""

import json
import subprocess
from pathlib import Path

import pytest
from support.llm_server import Reply
from support.provider_streams import collect, run

from pi_core.protocol.codec import message_from_json
from pi_core.protocol.model import Model
from pi_core.protocol.provider import LlmContext, StreamOptions, ToolSpec
from pi_plugins.models.registry import ModelRegistry
from pi_plugins.providers.catalogue import builtin_models

HERE = Path(__file__).parent
PI_REQUESTS = json.loads((HERE / "data" / "pi_requests.json").read_text(encoding="utf-8"))
LOCAL = PI_REQUESTS["cases"]["cross_completions_local_off"]["model"]  # a reasoning chat-completions model
RESPONSES = PI_REQUESTS["cases"]["simple_responses_high"]["model"]
SAMPLING = {"samplingParams": {"temperature": 1.0, "top_p": 0.95},
            "samplingParamsByThinkingLevel": {"off": {"temperature": 0.7, "top_p": 0.8}, "high": {"top_k": 20}}}
#: The fields these settings decide.
FIELDS = ("tools", "prompt_cache_key", "temperature", "top_p", "top_k")


def without_tools(context: dict) -> dict:
    return {**context, "tools": []}


CROSS = PI_REQUESTS["contexts"]["cross"]
SIMPLE = PI_REQUESTS["contexts"]["simple"]
CASES = {
    # all tools off in a conversation that used them: pi 1.6 leaves "tools" out
    "tool_history_without_tools": (LOCAL, without_tools(CROSS), {}),
    "tool_history_with_required_tools": ({**LOCAL, "compat": {"requiresToolsWithToolHistory": True}},
                                         without_tools(CROSS), {}),
    "non_null_assistant_content": ({**LOCAL, "compat": {"requiresNonNullAssistantContent": True}}, CROSS, {}),
    "cache_key_auto_elsewhere": (LOCAL, SIMPLE, {"sessionId": "s" * 80}),
    "cache_key_enabled": ({**LOCAL, "compat": {"promptCacheKeyMode": "enabled"}}, SIMPLE, {"sessionId": "s" * 80}),
    "cache_key_disabled": ({**LOCAL, "compat": {"promptCacheKeyMode": "disabled"}}, SIMPLE, {"sessionId": "s-1"}),
    "sampling_thinking_off": ({**LOCAL, **SAMPLING}, SIMPLE, {"temperature": 0.5}),
    "sampling_thinking_high": ({**LOCAL, **SAMPLING}, SIMPLE, {"temperature": 0.5, "reasoning": "high"}),
    "sampling_level_without_entry": ({**LOCAL, **SAMPLING}, SIMPLE, {"reasoning": "low"}),
    "sampling_responses": ({**RESPONSES, **SAMPLING}, SIMPLE, {"reasoning": "high"}),
}


def our_model(raw: dict, server) -> Model:
    return Model(id=raw["id"], provider=raw["provider"], api=raw["api"],
                 base_url=raw["baseUrl"].replace("http://127.0.0.1:PORT", server.url),
                 reasoning=raw["reasoning"], input=raw["input"], context_window=raw["contextWindow"],
                 max_tokens=raw["maxTokens"], thinking_level_map=raw.get("thinkingLevelMap"),
                 compat=raw.get("compat"), sampling_params=raw.get("samplingParams"),
                 sampling_params_by_thinking_level=raw.get("samplingParamsByThinkingLevel"))


def context_from_json(raw: dict) -> LlmContext:
    return LlmContext(system_prompt=raw.get("systemPrompt", ""),
                      messages=[message_from_json(m) for m in raw["messages"]],
                      tools=[ToolSpec(t["name"], t["description"], t["parameters"]) for t in raw.get("tools", [])])


def our_body(server, model: dict, context: dict, options: dict) -> dict:
    server.push(Reply(text="ok"))
    run(collect(our_model(model, server), context_from_json(context),
                StreamOptions(api_key="test-key", thinking_level=options.get("reasoning", "off"),
                              temperature=options.get("temperature"), session_id=options.get("sessionId"))))
    return server.requests[-1].body


def decided(body: dict) -> dict:
    """What the settings decide: the fields above, and each assistant message's content
    where it is no text (``None`` or ``""``)."""
    empty = [m["content"] for m in body.get("messages", []) if m.get("role") == "assistant"
             and m.get("content") in (None, "")]
    fields = {k: body[k] for k in FIELDS if k in body}
    if fields.get("tools"):
        fields["tools"] = "declared"  # how a declaration looks is not what these settings decide
    return {**fields, "empty_assistant_content": empty}


def test_sampling_params_are_merged_last_and_by_the_clamped_thinking_level(llm_server):
    off = our_body(llm_server, {**LOCAL, **SAMPLING}, SIMPLE, {"temperature": 0.5})
    assert (off["temperature"], off["top_p"], "top_k" in off) == (0.7, 0.8, False)  # over the request's 0.5
    high = our_body(llm_server, {**LOCAL, **SAMPLING}, SIMPLE, {"reasoning": "high"})
    assert (high["temperature"], high["top_p"], high["top_k"]) == (1.0, 0.95, 20)
    plain = our_body(llm_server, LOCAL, SIMPLE, {"temperature": 0.5})
    assert plain["temperature"] == 0.5 and "top_p" not in plain


def test_tools_are_left_out_when_none_is_on_unless_the_server_requires_them(llm_server):
    assert "tools" not in our_body(llm_server, LOCAL, without_tools(CROSS), {})
    required = {**LOCAL, "compat": {"requiresToolsWithToolHistory": True}}
    assert our_body(llm_server, required, without_tools(CROSS), {})["tools"] == []
    assert "tools" not in our_body(llm_server, required, without_tools(SIMPLE), {})  # no tool history


def test_prompt_cache_key_follows_its_mode(llm_server):
    session = {"sessionId": "s" * 80}
    assert "prompt_cache_key" not in our_body(llm_server, LOCAL, SIMPLE, session)
    enabled = our_body(llm_server, {**LOCAL, "compat": {"promptCacheKeyMode": "enabled"}}, SIMPLE, session)
    assert enabled["prompt_cache_key"] == "s" * 64
    disabled = {**LOCAL, "compat": {"promptCacheKeyMode": "disabled"}}
    assert "prompt_cache_key" not in our_body(llm_server, disabled, SIMPLE, session)


def test_models_json_sets_sampling_params_and_an_override_merges_them_per_level(tmp_path):
    (tmp_path / "models.json").write_text(json.dumps({"providers": {
        "local": {"baseUrl": "http://h/v1", "api": "openai-completions", "models": [{"id": "qwen", **SAMPLING}]},
        "groq": {"modelOverrides": {"llama-3.3-70b-versatile": {
            "samplingParams": {"top_p": 0.9}, "samplingParamsByThinkingLevel": {"off": {"min_p": 0.1}}}}},
    }}))
    registry = ModelRegistry(builtin_models(), agent_dir=tmp_path, env={})
    qwen = registry.find("local", "qwen")
    assert qwen.sampling_params == SAMPLING["samplingParams"]
    assert qwen.sampling_params_by_thinking_level == SAMPLING["samplingParamsByThinkingLevel"]
    llama = registry.find("groq", "llama-3.3-70b-versatile")
    assert (llama.sampling_params, llama.sampling_params_by_thinking_level) == ({"top_p": 0.9}, {"off": {"min_p": 0.1}})


def test_an_overrides_levels_merge_key_by_key_with_the_models():
    from pi_plugins.models.models_json import _apply_override

    base = Model(id="m", provider="p", api="openai-completions", sampling_params={"temperature": 1.0},
                 sampling_params_by_thinking_level={"off": {"temperature": 0.7, "top_p": 0.8}, "high": {"top_k": 20}})
    changed = _apply_override(base, {"samplingParams": {"top_p": 0.9},
                                     "samplingParamsByThinkingLevel": {"off": {"top_p": 0.5}}}, {})
    assert changed.sampling_params == {"temperature": 1.0, "top_p": 0.9}
    assert changed.sampling_params_by_thinking_level == {"off": {"temperature": 0.7, "top_p": 0.5}, "high": {"top_k": 20}}


def test_sampling_params_that_are_not_an_object_are_a_clear_error(tmp_path):
    (tmp_path / "models.json").write_text(json.dumps({"providers": {"local": {
        "baseUrl": "http://h/v1", "api": "openai-completions", "models": [{"id": "m", "samplingParams": [1]}]}}}))
    registry = ModelRegistry([], agent_dir=tmp_path, env={})
    assert len(registry.errors) == 1 and "samplingParams must be an object" in registry.errors[0]


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_the_bodies_are_pi_16s(llm_server):
    from support.programs import PI16, node_for, require_real

    require_real("pi16")
    closed = {name: {"model": {**model, "baseUrl": "http://127.0.0.1:9/v1"}, "context": context, "options": options}
              for name, (model, context, options) in CASES.items()}
    done = subprocess.run([node_for("pi16"), str(HERE / "pi16_payloads.mjs"), str(PI16.parent / "pi-ai")],
                          input=json.dumps(closed), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)
    for name, (model, context, options) in CASES.items():
        assert decided(our_body(llm_server, model, context, options)) == decided(theirs[name]), name
    assert "tools" not in theirs["tool_history_without_tools"]  # the cases show what they mean to
    assert theirs["sampling_thinking_high"]["top_k"] == 20


@pytest.mark.parametrize("provider,compat,expected", [
    ("openrouter", None, {"x-session-id": "s-1"}),  # on by default for OpenRouter, in its own header
    ("local", None, {}),
    ("local", {"sendSessionAffinityHeaders": True},
     {"session_id": "s-1", "x-client-request-id": "s-1", "x-session-affinity": "s-1"}),
    ("local", {"sendSessionAffinityHeaders": True, "sessionAffinityFormat": "generic"},
     {"x-client-request-id": "s-1", "x-session-affinity": "s-1"}),
    ("openrouter", {"sendSessionAffinityHeaders": False}, {}),
], ids=["openrouter", "off", "openai-style", "generic", "openrouter-off"])
def test_session_affinity_headers_are_pi_16s(llm_server, provider, compat, expected):
    model = {**LOCAL, "provider": provider, "compat": compat}
    our_body(llm_server, model, SIMPLE, {"sessionId": "s-1"})
    headers = {k.lower(): v for k, v in llm_server.requests[-1].headers.items()}
    names = ("session_id", "x-client-request-id", "x-session-affinity", "x-session-id")
    assert {k: headers[k] for k in names if k in headers} == expected


ANTHROPIC = PI_REQUESTS["cases"]["simple_anthropic_high"]["model"]
ADAPTIVE_CASES = {
    f"{model_id}_{level}": ({**ANTHROPIC, "id": model_id, "name": model_id,
                             **({"compat": {"forceAdaptiveThinking": True}} if adaptive else {})},
                            SIMPLE, {"reasoning": level})
    for model_id, adaptive in (("claude-opus-5-5", True), ("claude-sonnet-4-5", False))
    for level in ("low", "high")
}


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_claude_thinks_adaptively_where_the_catalogue_says_so_as_pi_16_asks(llm_server):
    """pi 1.6 asks Claude 4.6 and later (``compat.forceAdaptiveThinking`` in its catalogue:
    Opus 5.5, its default) for an effort, not a thinking budget."""
    from support.programs import PI16, node_for, require_real

    require_real("pi16")
    closed = {name: {"model": {**model, "baseUrl": "http://127.0.0.1:9"}, "context": context, "options": options}
              for name, (model, context, options) in ADAPTIVE_CASES.items()}
    done = subprocess.run([node_for("pi16"), str(HERE / "pi16_payloads.mjs"), str(PI16.parent / "pi-ai")],
                          input=json.dumps(closed), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)
    for name, (model, context, options) in ADAPTIVE_CASES.items():
        ours = our_body(llm_server, model, context, options)
        assert {k: ours.get(k) for k in ("thinking", "output_config", "temperature")} == \
            {k: theirs[name].get(k) for k in ("thinking", "output_config", "temperature")}, name
    assert theirs["claude-opus-5-5_high"]["thinking"]["type"] == "adaptive"


def test_the_catalogues_newer_claude_models_think_by_effort(llm_server):
    from pi_plugins.providers.catalogue import builtin_models

    opus = next(m for m in builtin_models() if m.key == "anthropic/claude-opus-5-5")
    llm_server.push(Reply(text="ok"))
    opus = Model(**{**{f: getattr(opus, f) for f in ("id", "provider", "api", "reasoning", "compat", "max_tokens",
                                                        "context_window")}, "base_url": llm_server.base_url("anthropic-messages")})
    run(collect(opus, LlmContext(messages=[]), StreamOptions(api_key="k", thinking_level="high")))
    body = llm_server.requests[-1].body
    # the catalogue says its level can change mid conversation: the level goes last, in a message
    assert body["thinking"]["type"] == "adaptive" and body["output_config"] == {"effort": "low"}
    assert body["messages"][-1]["output_config"] == {"effort": "high"}
