"""The request bodies are the ones the real pi sends, for the same conversation.

Two sources: the fixtures recorded from pi 0.73.1 sessions (``tests/fixtures``), and
``data/pi_requests.json``, bodies pi-ai 0.73.1 built for a conversation that switches
model and provider mid-session (Anthropic with thinking, then OpenAI, then Google),
for every API, thinking level and kind of model.
"""

import json
import re
from pathlib import Path

import pytest
from support.fixtures import REQUEST_FIXTURES, SESSION_FIXTURES
from support.llm_server import Reply
from support.provider_streams import collect, run

from pi_core.protocol.codec import line_from_json, loads_json, message_from_json
from pi_core.protocol.entries import MessageEntry
from pi_core.protocol.model import Model, ModelCost
from pi_core.protocol.provider import LlmContext, StreamOptions, ToolSpec

HERE = Path(__file__).parent
PI_REQUESTS = json.loads((HERE / "data" / "pi_requests.json").read_text(encoding="utf-8"))


def session_messages(name: str) -> list:
    lines = (SESSION_FIXTURES / name).read_text(encoding="utf-8").splitlines()
    entries = [line_from_json(loads_json(line)) for line in lines if line.strip()]
    return [e.message for e in entries if isinstance(e, MessageEntry)]


def recorded_requests(name: str) -> list[dict]:
    return [json.loads(line) for line in (REQUEST_FIXTURES / name).read_text(encoding="utf-8").splitlines()]


def contexts_before_each_answer(messages: list) -> list[list]:
    return [messages[:i] for i, m in enumerate(messages) if m.role == "assistant"]


def tools_of(body: dict) -> list[ToolSpec]:
    return [ToolSpec(t["function"]["name"], t["function"]["description"], t["function"]["parameters"])
            for t in body["tools"]]


@pytest.mark.parametrize("fixture,model_fields,level", [
    ("tools-openai.jsonl",
     dict(id="fake-model", provider="fake-openai", api="openai-completions", cost=ModelCost(input=1, output=2)),
     "off"),
    ("tools-anthropic-thinking.jsonl",
     dict(id="fake-claude", provider="fake-anthropic", api="anthropic-messages", reasoning=True),
     "low"),
])
def test_fixture_request_bodies_are_reproduced_from_the_fixture_session(llm_server, fixture, model_fields, level):
    recorded = recorded_requests(fixture)
    contexts = contexts_before_each_answer(session_messages(fixture))
    assert len(contexts) == len(recorded)
    tools = tools_of(recorded_requests("tools-openai.jsonl")[0]["body"])  # the same four tools
    model = Model(base_url=llm_server.base_url(model_fields["api"]), max_tokens=16384, **model_fields)
    for messages, expected in zip(contexts, recorded):
        llm_server.push(Reply(text="ok"))
        context = LlmContext(system_prompt="<system prompt elided>", messages=messages, tools=tools)
        run(collect(model, context, StreamOptions(api_key="k", thinking_level=level)))
        request = llm_server.requests[-1]
        assert request.path == expected["path"]
        assert without_strict(request.body) == without_strict(expected["body"])
        for name, value in expected["headers"].items():
            assert request.headers[name] == value


def test_the_fixture_usage_costs_are_reproduced(llm_server):
    """tools-openai's first answer: 1398 input and 12 output tokens at $1/$2 per million."""
    llm_server.push(Reply(text="x", usage={"input": 1398, "output": 12}))
    model = Model(id="fake-model", provider="fake-openai", api="openai-completions",
                  base_url=llm_server.base_url("openai-completions"), cost=ModelCost(input=1, output=2))
    message = run(collect(model, LlmContext(messages=session_messages("tools-openai.jsonl")[:1])))[1]
    recorded = session_messages("tools-openai.jsonl")[1].usage
    assert message.usage.cost.input == pytest.approx(recorded.cost.input)
    assert message.usage.cost.output == pytest.approx(recorded.cost.output)
    assert message.usage.cost.total == pytest.approx(recorded.cost.total)


def pi_model(raw: dict, server) -> Model:
    return Model(
        id=raw["id"], provider=raw["provider"], api=raw["api"], name=raw["name"],
        base_url=raw["baseUrl"].replace("http://127.0.0.1:PORT", server.url),
        reasoning=raw["reasoning"], input=raw["input"],
        cost=ModelCost(input=raw["cost"]["input"], output=raw["cost"]["output"],
                       cache_read=raw["cost"]["cacheRead"], cache_write=raw["cost"]["cacheWrite"]),
        context_window=raw["contextWindow"], max_tokens=raw["maxTokens"],
        thinking_level_map=raw.get("thinkingLevelMap"),
    )


def pi_context(name: str) -> LlmContext:
    return context_from_json(PI_REQUESTS["contexts"][name])


def context_from_json(raw: dict) -> LlmContext:
    return LlmContext(
        system_prompt=raw.get("systemPrompt", ""),
        messages=[message_from_json(m) for m in raw["messages"]],
        tools=[ToolSpec(t["name"], t["description"], t["parameters"]) for t in raw.get("tools", [])],
    )


def pi_options(raw: dict) -> StreamOptions:
    return StreamOptions(api_key="test-key", thinking_level=raw.get("reasoning", "off"),
                         temperature=raw.get("temperature"), max_tokens=raw.get("maxTokens"),
                         session_id=raw.get("sessionId"))


def other_models_thinking(context: str, model: dict) -> set[str]:
    """The thinking texts in ``context`` that models other than ``model`` wrote."""
    return {block["thinking"] for m in PI_REQUESTS["contexts"][context]["messages"] if m["role"] == "assistant"
            and (m.get("provider"), m.get("api"), m.get("model")) != (model["provider"], model["api"], model["id"])
            for block in m["content"] if block["type"] == "thinking" and not block.get("redacted")}


def without_thinking_text(value, texts: set[str]):
    """pi 0.73.1's ``value`` (a request body), less the other models' thinking it sent as
    plain text: a part that carries one of ``texts`` (Anthropic's and Google's text parts,
    a Responses output text, and with it a message left empty), or a chat-completions
    content string's leading one (0.73.1 joined the blocks without a separator)."""
    if isinstance(value, str):
        for text in texts:
            if value.startswith(text) and len(value) > len(text):
                return value[len(text):]
        return value
    if isinstance(value, dict):
        return {k: without_thinking_text(v, texts) for k, v in value.items()}
    if isinstance(value, list):
        kept = []
        for item in value:
            if isinstance(item, dict) and any(isinstance(x, str) and x in texts for x in item.values()):
                continue
            changed = without_thinking_text(item, texts)
            if isinstance(item, dict) and item.get("content") and changed.get("content") == []:
                continue
            kept.append(changed)
        return kept
    return value


@pytest.mark.parametrize("case", sorted(PI_REQUESTS["cases"]))
def test_bodies_match_pi_for_every_api_level_and_cross_model_history(llm_server, case):
    spec = PI_REQUESTS["cases"][case]
    model = pi_model(spec["model"], llm_server)
    llm_server.push(Reply(text="ok"))
    run(collect(model, pi_context(spec["context"]), pi_options(spec["options"])))
    request = llm_server.requests[-1]
    assert request.path + ("?alt=sse" if request.query else "") == spec["path"]
    # the bodies are pi 0.73.1's, which sent another model's thinking as plain text; pi 1.6
    # drops it, as we do (test_another_models_thinking_is_dropped_as_pi_16_drops_it runs
    # pi 1.6's own transform on the same history). 0.73.1 also capped the output at 32000
    # tokens where pi 1.6 asks for the model's whole limit: those fields are compared with
    # pi 1.6's own (test_the_output_limit_and_thinking_budget_are_pi_16s)
    expected = without_thinking_text(spec["body"], other_models_thinking(spec["context"], spec["model"]))
    # and 0.73.1 said "strict": false on every Chat Completions tool, where pi 1.6 says it
    # only to a server whose compat takes strict mode (test_completions_strict_pi16.py)
    # and named replayed text with no id of its own msg_<n> where pi 1.6 says msg_pi_<n>
    # (test_responses_ids_pi16.py)
    assert without_fallback_ids(without_strict(without_output_limit(request.body))) == \
        without_fallback_ids(without_strict(without_output_limit(expected)))


def without_fallback_ids(body: dict) -> dict:
    """A Responses body whose replayed texts' made-up ids (``msg_3``, ``msg_pi_3_1``) are one."""
    if not isinstance(body.get("input"), list):
        return body
    made_up = re.compile(r"^msg_(pi_)?\d+(_\d+)?$")
    return {**body, "input": [{**item, "id": "msg_<n>"} if isinstance(item, dict) and item.get("type") == "message"
                              and made_up.match(str(item.get("id", ""))) else item for item in body["input"]]}


def without_strict(body: dict) -> dict:
    """A Chat Completions body with no tool's ``strict`` field, and an Anthropic one with no
    tool schema's ``additionalProperties`` (0.73.1 dropped it; pi 1.6 keeps it, as we do:
    test_compat_fields_pi16.py)."""
    if not isinstance(body.get("tools"), list):
        return body
    tools = [{**t, "function": {k: v for k, v in t["function"].items() if k != "strict"}}
             if isinstance(t, dict) and isinstance(t.get("function"), dict) else t for t in body["tools"]]
    tools = [{**t, "input_schema": {k: v for k, v in t["input_schema"].items() if k != "additionalProperties"}}
             if isinstance(t, dict) and isinstance(t.get("input_schema"), dict) else t for t in tools]
    # Responses tools: 0.73.1 said strict false to all; pi 1.6 strict schemas for pi's
    # constrained tools where the compat says strict mode (test_compat_fields_pi16.py)
    tools = [{k: v for k, v in t.items() if k != "strict" and not (k == "parameters" and t.get("name") in
                                                                   ("read", "bash", "edit", "write"))}
             if isinstance(t, dict) and "name" in t and "function" not in t else t for t in tools]
    return {**body, "tools": tools}


def without_output_limit(body: dict) -> dict:
    body = {k: v for k, v in body.items() if k not in OUTPUT_LIMIT_FIELDS}
    if isinstance(body.get("thinking"), dict):
        body["thinking"] = {k: v for k, v in body["thinking"].items() if k != "budget_tokens"}
    if "generationConfig" in body:
        body["generationConfig"] = {k: v for k, v in body["generationConfig"].items() if k != "maxOutputTokens"}
    return body


OUTPUT_LIMIT_FIELDS = ("max_tokens", "max_completion_tokens", "max_output_tokens")


def output_limit(body: dict) -> dict:
    """The fields that say how much a request may answer: the output limit (in whichever
    field the API names it) and a thinking budget; Google's as pi-ai hands it to its SDK."""
    config = body.get("generationConfig") or body.get("config") or {}
    thinking = body.get("thinking") if isinstance(body.get("thinking"), dict) else {}
    return {**{k: body[k] for k in OUTPUT_LIMIT_FIELDS if k in body},
            "maxOutputTokens": config.get("maxOutputTokens"), "budget_tokens": thinking.get("budget_tokens")}


def crowded(context: dict, characters: int) -> dict:
    """``context`` with a last user message of ``characters`` characters (after the last
    answer's usage, so that it is estimated)."""
    return {**context, "messages": [*context["messages"],
                                    {"role": "user", "content": "x" * characters, "timestamp": 1}]}


#: More cases for the output limit: windows nearly full and small ones, where pi 1.6 asks
#: for less than the model's limit (its 4096-token margin, 15% of the input, 32768 at most).
OUTPUT_LIMIT_CASES = {
    "full_anthropic_think": ("cross_anthropic_think", {"contextWindow": 200000}, 600_000),
    "full_anthropic_off": ("cross_anthropic_off", {"contextWindow": 200000}, 560_000),
    "small_completions": ("cross_completions_local_off", {"contextWindow": 32768}, 70_000),
    "over_full_responses": ("cross_responses_off", {"contextWindow": 128000}, 500_000),
    "half_google": ("cross_google_off", {"contextWindow": 131072}, 200_000),
    "caller_limit_near_full": ("simple_completions_off", {"contextWindow": 40000}, 120_000),
}


def output_limit_cases() -> dict:
    cases = {name: (spec["model"], PI_REQUESTS["contexts"][spec["context"]], spec["options"])
             for name, spec in PI_REQUESTS["cases"].items()}
    for name, (base, model, characters) in OUTPUT_LIMIT_CASES.items():
        spec = PI_REQUESTS["cases"][base]
        cases[name] = ({**spec["model"], **model}, crowded(PI_REQUESTS["contexts"][spec["context"]], characters),
                       spec["options"])
    return cases


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_the_output_limit_and_thinking_budget_are_pi_16s(llm_server):
    """pi 1.6 asks for the model's whole output limit (or the caller's) fitted to what the
    context window has left; pi-ai 1.6's own streamSimple builds each body here."""
    import subprocess

    from support.programs import PI16, node_for, require_real

    require_real("pi16")
    cases = output_limit_cases()
    closed = {name: {"model": {**model, "baseUrl": "http://127.0.0.1:9"}, "context": context, "options": options}
              for name, (model, context, options) in cases.items()}
    done = subprocess.run([node_for("pi16"), str(HERE / "pi16_payloads.mjs"), str(PI16.parent / "pi-ai")],
                          input=json.dumps(closed), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)
    assert set(theirs) == set(cases)
    for name, (model, context, options) in sorted(cases.items()):
        llm_server.push(Reply(text="ok"))
        run(collect(pi_model(model, llm_server), context_from_json(context), pi_options(options)))
        ours = output_limit(llm_server.requests[-1].body)
        assert ours == output_limit(theirs[name]), name
    fitted = {name: output_limit(theirs[name]) for name in OUTPUT_LIMIT_CASES}
    assert fitted["full_anthropic_off"]["max_tokens"] < 64000  # the cases do fit the limit
    assert fitted["over_full_responses"]["max_output_tokens"] == 16  # the Responses API's least
    assert output_limit(theirs["cross_responses_off"])["max_output_tokens"] == 128000  # not 0.73.1's 32000


def test_switching_provider_mid_session_gives_a_valid_request_for_each():
    """The adaptation itself, stated plainly (the bodies above show the details)."""
    bodies = {name: PI_REQUESTS["cases"][f"cross_{name}_think"]["body"]
              for name in ("anthropic", "responses", "google", "completions_local")}
    anthropic = json.dumps(bodies["anthropic"])
    assert '"signature": "sig-anthropic-1"' in anthropic  # own thinking kept, signed
    assert '"redacted_thinking"' in anthropic
    assert "call_resp_1_fc_resp_1" in anthropic  # a Responses id made valid for Anthropic
    google = json.dumps(bodies["google"])
    assert "sig-anthropic-1" not in google and "REDACTED" not in google  # no foreign signature
    assert '"error": "No result provided"' in google  # the orphan call answered
    assert "partial" not in google  # the aborted answer skipped


#: Runs pi-ai 1.6's own transformMessages on a history for a target model (its data only
#: goes out: the thinking and text blocks each answer keeps).
_PI16_TRANSFORM = """
const [piAi, payload] = process.argv.slice(1);
const { transformMessages } = await import(piAi + "/dist/api/transform-messages.js");
const { messages, models } = JSON.parse(payload);
const kept = models.map((model) => transformMessages(messages, model).map((m) =>
  m.role === "assistant" ? m.content.filter((b) => b.type === "thinking" || b.type === "text")
    .map((b) => [b.type, b.type === "text" ? b.text : b.thinking]) : null));
console.log(JSON.stringify(kept));
"""


@pytest.mark.process
@pytest.mark.requires("pi16")
def test_another_models_thinking_is_dropped_as_pi_16_drops_it():
    import subprocess
    from types import SimpleNamespace

    from support.programs import PI16, node_for, require_real

    from pi_core.protocol.messages import TextContent, ThinkingContent
    from pi_plugins.providers.transform import transform_messages

    require_real("pi16")
    raw = PI_REQUESTS["contexts"]["cross"]["messages"]
    targets = [spec["model"] for name, spec in sorted(PI_REQUESTS["cases"].items()) if name.endswith("_think")]
    done = subprocess.run([node_for("pi16"), "--input-type=module", "-e", _PI16_TRANSFORM, str(PI16.parent / "pi-ai"),
                           json.dumps({"messages": raw, "models": targets})], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    theirs = json.loads(done.stdout)
    messages = [message_from_json(m) for m in raw]
    for target, pi_kept in zip(targets, theirs, strict=True):
        ours = [[["thinking", b.thinking] if isinstance(b, ThinkingContent) else ["text", b.text]
                 for b in m.content if isinstance(b, (ThinkingContent, TextContent))] if m.role == "assistant" else None
                for m in transform_messages(messages, pi_model(target, SimpleNamespace(url="http://127.0.0.1:9")))]
        assert ours == pi_kept, target["id"]
    kept_by_claude = [block for kept in theirs[0] or [] if kept for block in kept]
    assert ["thinking", "I should list files."] in kept_by_claude  # a model's own thinking is still sent
    assert ["text", "Read a.txt next."] not in kept_by_claude  # another's is not, not even as text
