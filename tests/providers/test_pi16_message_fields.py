"""pi 1.6's ``rawStopReason`` (the provider's own stop reason, as received) and
``usage.reasoning`` (thinking tokens, a part of ``output``), as each provider fills them."""

import json
from pathlib import Path

import pytest
from support.llm_server import (
    ANTHROPIC,
    AZURE,
    BEDROCK,
    CODEX,
    COMPLETIONS,
    GOOGLE,
    MISTRAL,
    RESPONSES,
    VERTEX,
    Reply,
)
from support.provider_streams import collect, run

from pi_core.protocol.codec import message_from_json, to_json
from pi_core.protocol.messages import TextContent, UserMessage
from pi_core.protocol.model import ModelCost
from pi_core.protocol.provider import LlmContext

PI16_SESSION = Path(__file__).parents[1] / "fixtures" / "sessions-pi16" / "cli-context-edit.jsonl"

#: api: (raw reason of a plain answer, raw reason of a cut-off one, the reply's ``stop`` for it,
#: whether the API reports a reasoning count)
EXPECTED = {
    COMPLETIONS: ("stop", "length", "length", True),
    MISTRAL: (None, None, "length", False),  # pi 1.6's Mistral keeps neither
    RESPONSES: ("completed", "incomplete.max_output_tokens", "max_output_tokens", True),
    AZURE: ("completed", "incomplete.max_output_tokens", "max_output_tokens", True),
    CODEX: ("completed", "incomplete.max_output_tokens", "max_output_tokens", True),
    ANTHROPIC: ("end_turn", "max_tokens", "max_tokens", True),
    GOOGLE: ("STOP", "MAX_TOKENS", "MAX_TOKENS", True),
    VERTEX: ("STOP", "MAX_TOKENS", "MAX_TOKENS", True),
    BEDROCK: ("end_turn", "max_tokens", "max_tokens", False),  # Converse gives no reasoning split
}


def context():
    return LlmContext(system_prompt="Be brief.", messages=[UserMessage(content=[TextContent("Hi")])])


def test_the_raw_stop_reason_and_reasoning_tokens_land_in_the_message(llm_server, api):
    plain, _cut, _stop, has_reasoning = EXPECTED[api]
    llm_server.push(Reply(thinking="Mull it over.", text="Answer.", usage={"output": 300, "reasoning": 120}))
    _events, message = run(collect(llm_server.model(api, reasoning=True), context()))
    assert message.stop_reason == "stop"
    assert message.raw_stop_reason == plain
    assert message.usage.reasoning == (120 if has_reasoning else None)
    assert message.usage.output == 300  # reasoning is a part of output, not added to it
    written = to_json(message)
    assert ("rawStopReason" in written) is (plain is not None)
    assert ("reasoning" in written["usage"]) is has_reasoning


def test_a_cut_off_answer_keeps_the_providers_own_reason(llm_server, api):
    _plain, cut, stop, _has_reasoning = EXPECTED[api]
    llm_server.push(Reply(text="Half an ans", stop=stop))
    _events, message = run(collect(llm_server.model(api), context()))
    assert message.stop_reason == "length"
    assert message.raw_stop_reason == cut


@pytest.mark.parametrize("api", [COMPLETIONS, RESPONSES, GOOGLE])
def test_reasoning_is_written_as_zero_where_the_api_reports_none_used(llm_server, api):
    llm_server.push(Reply(text="Quick."))
    _events, message = run(collect(llm_server.model(api), context()))
    assert to_json(message)["usage"]["reasoning"] == 0


def test_anthropic_without_a_thinking_count_leaves_reasoning_out(llm_server):
    llm_server.push(Reply(text="Quick."))
    _events, message = run(collect(llm_server.model(ANTHROPIC), context()))
    assert message.usage.reasoning is None and "reasoning" not in to_json(message)["usage"]


def test_the_fields_are_written_in_pis_key_order(llm_server):
    llm_server.push(Reply(text="Answer.", usage={"output": 9, "reasoning": 4}))
    _events, message = run(collect(llm_server.model(COMPLETIONS), context()))
    written = to_json(message)
    assert list(written)[-3:] == ["timestamp", "responseId", "rawStopReason"]
    assert list(written["usage"]) == ["input", "output", "cacheRead", "cacheWrite", "reasoning", "totalTokens", "cost"]


def test_a_pi16_session_files_fields_are_read_and_written_back_exactly():
    lines = [json.loads(line) for line in PI16_SESSION.read_text().splitlines()]
    answers = [l["message"] for l in lines if l.get("type") == "message" and l["message"]["role"] == "assistant"]
    assert answers
    for answer in answers:
        message = message_from_json(answer)
        assert message.raw_stop_reason == answer["rawStopReason"]
        assert message.usage.reasoning == answer["usage"]["reasoning"] == 0
        assert "rawStopReason" not in (message.extra or {})
        assert json.dumps(to_json(message)) == json.dumps(answer)  # same keys, same order


def test_a_failed_response_keeps_its_status_as_the_raw_reason(llm_server):
    llm_server.push(Reply(text="Part", error="the model fell over"))
    _events, message = run(collect(llm_server.model(RESPONSES), context()))
    assert message.stop_reason == "error" and "the model fell over" in message.error_message
    assert message.raw_stop_reason == "failed"
    assert list(to_json(message)).index("rawStopReason") < list(to_json(message)).index("errorMessage")


def test_an_hours_cache_writes_are_kept_apart_and_priced_at_twice_the_input_rate(llm_server):
    """pi 1.6's ``cacheWrite1h`` (PI_CACHE_RETENTION=long): 1.25x for the five-minute
    writes, 2x the input rate for the hour's."""
    llm_server.push(Reply(text="Cached.", usage={"input": 0, "cache_write": 1_000_000, "cache_write_1h": 400_000}),
                    Reply(text="Plain.", usage={"input": 0, "cache_write": 1_000_000}))
    model = llm_server.model(ANTHROPIC, cost=ModelCost(input=3, output=15, cache_read=0.3, cache_write=3.75))
    _events, hour = run(collect(model, context()))
    _events, plain = run(collect(model, context()))
    assert to_json(hour)["usage"]["cacheWrite1h"] == 400_000 and to_json(plain)["usage"]["cacheWrite1h"] == 0
    assert hour.usage.cost.cache_write == pytest.approx(3.75 * 0.6 + 3 * 2 * 0.4)
    assert plain.usage.cost.cache_write == pytest.approx(3.75)
